import request from 'supertest';
import { ERROR_STATUS, type ErrorCode } from '../../src/errors';
import { OAUTH_DIALECT } from '../../src/routes/oauth/oauth-errors';
import { makeSignedInUser } from '../helpers/factories';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Errors by dialect: the OAuth protocol endpoints (token, revoke, userinfo) answer RFC 6749's
 * `{ error, error_description }`, translated at the OAuth router's boundary by an explicit table; every other
 * route, /api/oauth/consent-info included, keeps the contract's `{ error, message }`.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

test('the table translates every contract code; rate limits and bad input are invalid_request, an outage temporarily_unavailable', () => {
  expect(Object.keys(OAUTH_DIALECT).sort()).toEqual(Object.keys(ERROR_STATUS).sort());
  const expected: Partial<Record<ErrorCode, string>> = {
    rate_limited: 'invalid_request',
    validation_error: 'invalid_request',
    service_unavailable: 'temporarily_unavailable',
    unauthorized: 'invalid_client',
    internal_error: 'server_error',
  };
  for (const [code, oauth] of Object.entries(expected)) expect(OAUTH_DIALECT[code as ErrorCode]).toBe(oauth);
});

test('a malformed JSON body (rejected before any route) is invalid_request 400 on /token, validation_error elsewhere', async () => {
  const token = await request(t.app).post('/api/oauth/token').set('Content-Type', 'application/json').send('{"grant_type":');
  expect(token.status).toBe(400);
  expect(token.body).toEqual({ error: 'invalid_request', error_description: 'Malformed JSON body' });
  expect(token.headers['cache-control']).toBe('no-store');

  const approve = await request(t.app)
    .post('/api/oauth/authorize/approve')
    .set('Authorization', (await makeSignedInUser(t)).bearer)
    .set('Content-Type', 'application/json')
    .send('{"request_id":');
  expect(approve.status).toBe(400);
  expect(approve.body.error).toBe('validation_error');
  expect(approve.body.message).toBe('Malformed JSON body');
});

test('a repeated form parameter names the problem in error_description', async () => {
  const res = await request(t.app).post('/api/oauth/token').type('form').send('grant_type=a&grant_type=b');
  expect(res.status).toBe(400);
  expect(res.body).toEqual({ error: 'invalid_request', error_description: 'grant_type must be a single string' });
});

test('over the per-IP limit: 429 stays 429 with Retry-After, in the OAuth shape on /token and /revoke only', async () => {
  const limited = await createTestApp({ env: { RATE_LIMIT_MAX: '1' } });
  try {
    await request(limited.app).get('/health');
    await request(limited.app).post('/api/oauth/revoke').type('form').send({ token: 'x' });
    for (const path of ['/api/oauth/token', '/api/oauth/revoke']) {
      const res = await request(limited.app).post(path).type('form').send({ grant_type: 'refresh_token' });
      expect(res.status).toBe(429);
      expect(res.body.error).toBe('invalid_request');
      expect(res.body.error_description).toEqual(expect.any(String));
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
    const consent = await request(limited.app).get('/api/oauth/consent-info?request_id=x');
    expect(consent.status).toBe(429);
    expect(consent.body.error).toBe('rate_limited');
  } finally {
    await limited.close();
  }
});

test('userinfo without a token: invalid_token with the Bearer challenge', async () => {
  const res = await request(t.app).get('/api/oauth/userinfo');
  expect(res.status).toBe(401);
  expect(res.body.error).toBe('invalid_token');
  expect(res.headers['www-authenticate']).toBe('Bearer');
});

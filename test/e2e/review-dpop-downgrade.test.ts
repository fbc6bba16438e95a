import http from 'node:http';
import net from 'node:net';
import { once } from 'node:events';
import request from 'supertest';
import { makeAppClient } from '../helpers/apps';
import { makeClientKey, type ClientKeyPair } from '../helpers/client-keys';
import { dpopProof } from '../helpers/dpop';
import { makeUser, signIn } from '../helpers/factories';
import { obtainCode } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Security review (docs/security.md, "Sixth review"): a stolen DPoP-bound access token is useless without its key
 * (RFC 9449 §7), whichever way it is presented. Before the fix, the token sent as the `accessToken` cookie instead of
 * an Authorization header skipped the proof check and read the user at /api/auth/me.
 */
let t: TestApp;
let key: ClientKeyPair;
let bound: string;

beforeAll(async () => {
  // A BASE_URL with a port, as most deployments have: BASE_URL + an absolute-form target is then not a URL at all.
  t = await createTestApp({ env: { BASE_URL: 'http://sso.test:8443' } });
  key = await makeClientKey('ES256');
  const client = await makeAppClient(t, { type: 'public' });
  const { agent } = await signIn(t, await makeUser(t));
  const { code, verifier, redirectUri } = await obtainCode(agent, { ...client, clientSecret: '' });
  const res = await request(t.app)
    .post('/api/oauth/token')
    .set('DPoP', await dpopProof(key, { htu: `${t.ctx.config.baseUrl}/api/oauth/token`, now: t.clock.now() }))
    .type('form')
    .send({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, client_id: client.clientId });
  expect(res.body.token_type).toBe('DPoP');
  bound = res.body.access_token;
});
afterAll(async () => {
  await t?.close();
});

test('GET /api/auth/me: a bound token in the accessToken cookie is refused (401, DPoP challenge)', async () => {
  const res = await request(t.app).get('/api/auth/me').set('Cookie', `accessToken=${bound}`);
  expect(res.status).toBe(401);
  expect(res.body).toEqual({ error: 'unauthorized', message: expect.stringContaining('DPoP-bound') });
  expect(res.headers['www-authenticate']).toMatch(/^DPoP error="invalid_token"/);
});

test('POST /api/auth/logout: a bound token in the cookie does not end the session', async () => {
  const res = await request(t.app).post('/api/auth/logout').set('Origin', t.ctx.config.baseUrl).set('Cookie', `accessToken=${bound}`);
  expect(res.status).toBe(401);
  const me = await request(t.app)
    .get('/api/auth/me')
    .set('Authorization', `DPoP ${bound}`)
    .set('DPoP', await dpopProof(key, { htm: 'GET', htu: `${t.ctx.config.baseUrl}/api/auth/me`, accessToken: bound, now: t.clock.now() }));
  expect(me.status).toBe(200);
});

/** A raw HTTP/1.1 request (supertest cannot send an absolute-form request target, RFC 9112 §3.2.2). */
function rawGet(port: number, target: string, headers: Record<string, string>): Promise<{ status: number }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}`);
      socket.write([`GET ${target} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close', ...lines, '', ''].join('\r\n'));
    });
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString()));
    socket.on('end', () => resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(data)?.[1] ?? 0) }));
    socket.on('error', reject);
  });
}

test('a proof whose htu is not a URL is refused, also when the request target is in absolute form', async () => {
  const server = http.createServer(t.app).listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const proof = await dpopProof(key, { htm: 'GET', htu: 'not a url', accessToken: bound, now: t.clock.now() });
    const res = await rawGet(port, 'http://elsewhere.example/api/auth/me', { Authorization: `DPoP ${bound}`, DPoP: proof });
    expect(res.status).toBe(401);
  } finally {
    server.close();
  }
});

import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { makeClient, makeUser, signIn } from '../helpers/factories';
import { authorizeParams, authorizePath, exchangeCode, locationParams } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

async function pendingRequest(scope = 'openid profile email') {
  const user = await makeUser(t);
  const session = await signIn(t, user);
  const client = await makeClient(t, { name: 'Photo Printer' });
  const { params, verifier, state } = authorizeParams(client, { scope });
  const res = await session.agent.get(authorizePath(params));
  const requestId = new URL(res.headers.location).searchParams.get('request_id')!;
  return { user, ...session, client, requestId, verifier, state, params };
}

describe('GET /api/oauth/consent-info', () => {
  test('returns request, client name and scopes', async () => {
    const p = await pendingRequest('email openid');
    const res = await p.agent.get(`/api/oauth/consent-info?request_id=${p.requestId}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      request_id: p.requestId,
      client: { client_id: p.client.clientId, name: 'Photo Printer' },
      scopes: ['openid', 'email'],
      redirect_uri: p.client.redirectUris[0],
      resources: [],
    });
  });

  test('requires authentication', async () => {
    const p = await pendingRequest();
    const res = await request(t.app).get(`/api/oauth/consent-info?request_id=${p.requestId}`);
    expect(res.status).toBe(401);
  });

  test("another user's request -> 404", async () => {
    const p = await pendingRequest();
    const other = await signIn(t, await makeUser(t));
    const res = await other.agent.get(`/api/oauth/consent-info?request_id=${p.requestId}`);
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('not_found');
  });

  test('malformed request_id -> 400, unknown -> 404', async () => {
    const p = await pendingRequest();
    expect((await p.agent.get('/api/oauth/consent-info?request_id=nope')).status).toBe(400);
    expect((await p.agent.get(`/api/oauth/consent-info?request_id=${randomUUID()}`)).status).toBe(404);
  });

  test('expired after 10 minutes -> 404', async () => {
    const p = await pendingRequest();
    t.clock.advance(601);
    const res = await p.agent.get(`/api/oauth/consent-info?request_id=${p.requestId}`);
    expect(res.status).toBe(404);
  });
});

describe('POST /api/oauth/authorize/approve', () => {
  test('returns redirect_url with code and state, records the grant, stores only the code hash', async () => {
    const p = await pendingRequest();
    const res = await p.agent.post('/api/oauth/authorize/approve').send({ request_id: p.requestId });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['redirect_url']);
    expect(res.body.redirect_url.startsWith(`${p.client.redirectUris[0]}?`)).toBe(true);
    const q = locationParams(res.body.redirect_url);
    expect(q.get('state')).toBe(p.state);
    const code = q.get('code')!;
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const grant = await t.db('oauth_grants').where({ user_id: p.user.id, client_id: p.client.clientId }).first();
    expect(grant.scope).toBe('openid profile email');
    const codes = await t.db('oauth_codes').where({ user_id: p.user.id });
    expect(codes).toHaveLength(1);
    expect(codes[0].code_hash).not.toBe(code);
    expect(codes[0].code_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(codes[0]).toMatchObject({
      client_id: p.client.clientId,
      redirect_uri: p.client.redirectUris[0],
      code_challenge: p.params.code_challenge,
    });
    expect(new Date(codes[0].expires_at).getTime() - new Date(codes[0].created_at).getTime()).toBe(600_000);
  });

  test('a pending request is consumed once: second approve -> 404', async () => {
    const p = await pendingRequest();
    const results = await Promise.all([1, 2, 3].map(() => p.agent.post('/api/oauth/authorize/approve').send({ request_id: p.requestId })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 404, 404]);
  });

  test("another user approving someone's request -> 404 and the request stays pending", async () => {
    const p = await pendingRequest();
    const other = await signIn(t, await makeUser(t));
    const res = await other.agent.post('/api/oauth/authorize/approve').send({ request_id: p.requestId });
    expect(res.status).toBe(404);
    expect(await t.db('oauth_grants').where({ client_id: p.client.clientId })).toHaveLength(0);
    const mine = await p.agent.post('/api/oauth/authorize/approve').send({ request_id: p.requestId });
    expect(mine.status).toBe(200);
  });

  test('a token issued to an OAuth client cannot approve consent', async () => {
    const p = await pendingRequest();
    const approve = await p.agent.post('/api/oauth/authorize/approve').send({ request_id: p.requestId });
    const code = locationParams(approve.body.redirect_url).get('code')!;
    const tokens = await exchangeCode(t, p.client, { code, verifier: p.verifier });
    const second = authorizeParams(p.client, { scope: 'openid' });
    await t.db('oauth_grants').del();
    const auth = await p.agent.get(authorizePath(second.params));
    const requestId = new URL(auth.headers.location).searchParams.get('request_id')!;
    const res = await request(t.app)
      .post('/api/oauth/authorize/approve')
      .set('Authorization', `Bearer ${tokens.body.access_token}`)
      .send({ request_id: requestId });
    expect(res.status).toBe(403);
  });

  test('merges scopes with an earlier grant', async () => {
    const p = await pendingRequest('openid');
    await p.agent.post('/api/oauth/authorize/approve').send({ request_id: p.requestId });
    const { params } = authorizeParams(p.client, { scope: 'email' });
    const res = await p.agent.get(authorizePath(params));
    const requestId = new URL(res.headers.location).searchParams.get('request_id')!;
    await p.agent.post('/api/oauth/authorize/approve').send({ request_id: requestId });
    const grant = await t.db('oauth_grants').where({ user_id: p.user.id, client_id: p.client.clientId }).first();
    expect(grant.scope).toBe('openid email');
  });
});

describe('POST /api/oauth/authorize/deny', () => {
  test('redirect_url carries error=access_denied and state; no grant, no code', async () => {
    const p = await pendingRequest();
    const res = await p.agent.post('/api/oauth/authorize/deny').send({ request_id: p.requestId });
    expect(res.status).toBe(200);
    const q = locationParams(res.body.redirect_url);
    expect(q.get('error')).toBe('access_denied');
    expect(q.get('state')).toBe(p.state);
    expect(q.get('error_description')).toBeTruthy();
    expect(q.get('code')).toBeNull();
    expect(await t.db('oauth_grants').where({ user_id: p.user.id })).toHaveLength(0);
    expect(await t.db('oauth_codes').where({ user_id: p.user.id })).toHaveLength(0);
    const again = await p.agent.post('/api/oauth/authorize/approve').send({ request_id: p.requestId });
    expect(again.status).toBe(404);
  });

  test("another user's request -> 404", async () => {
    const p = await pendingRequest();
    const other = await signIn(t, await makeUser(t));
    expect((await other.agent.post('/api/oauth/authorize/deny').send({ request_id: p.requestId })).status).toBe(404);
  });
});

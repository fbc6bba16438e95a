import { decodeJwt } from 'jose';
import request from 'supertest';
import { makeClient, makeSignedInUser, makeUser, signIn } from '../helpers/factories';
import { authorizeParams, authorizePath, csrfFrom, exchangeCode, locationParams, obtainCode } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Standards a client library relies on with the default configuration: RFC 9207 `iss` on every authorization response,
 * OpenID scope handling (OIDC Core §3.1.2.1, offline_access), and bounded redirects from the consent form.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const ISSUER = 'http://sso.test';

describe('RFC 9207: iss on authorization responses', () => {
  test('a code straight from authorize (existing grant) and a code from consent both carry iss = the discovery issuer', async () => {
    const user = await makeUser(t);
    const client = await makeClient(t);
    const { agent } = await signIn(t, user);
    const { params } = authorizeParams(client);
    const toConsent = await agent.get(authorizePath(params));
    const requestId = locationParams(toConsent.headers.location).get('request_id');
    const approved = await agent.post('/api/oauth/authorize/approve').send({ request_id: requestId });
    expect(locationParams(approved.body.redirect_url).get('iss')).toBe(ISSUER);
    expect(locationParams(approved.body.redirect_url).get('code')).toBeTruthy();

    const again = await agent.get(authorizePath(authorizeParams(client).params));
    expect(again.status).toBe(302);
    expect(locationParams(again.headers.location).get('code')).toBeTruthy();
    expect(locationParams(again.headers.location).get('iss')).toBe(ISSUER);
    const discovery = await request(t.app).get('/api/oauth/.well-known/oauth-authorization-server');
    expect(discovery.body.issuer).toBe(ISSUER);
  });

  test('error redirects (authorize errors and a denied consent) carry iss too', async () => {
    const user = await makeUser(t);
    const client = await makeClient(t);
    const { agent } = await signIn(t, user);
    const badPkce = await agent.get(authorizePath(authorizeParams(client, { code_challenge_method: 'plain' }).params));
    expect(locationParams(badPkce.headers.location).get('error')).toBe('invalid_request');
    expect(locationParams(badPkce.headers.location).get('iss')).toBe(ISSUER);

    const toConsent = await agent.get(authorizePath(authorizeParams(client).params));
    const requestId = locationParams(toConsent.headers.location).get('request_id');
    const denied = await agent.post('/api/oauth/authorize/deny').send({ request_id: requestId });
    expect(locationParams(denied.body.redirect_url).get('error')).toBe('access_denied');
    expect(locationParams(denied.body.redirect_url).get('iss')).toBe(ISSUER);
  });

  test('OIDC_ISSUER is the iss of the authorization response', async () => {
    const custom = await createTestApp({ env: { OIDC_ISSUER: 'https://id.example.com' } });
    try {
      const client = await makeClient(custom);
      const res = await request(custom.app).get(authorizePath(authorizeParams(client, { prompt: 'none' }).params));
      expect(locationParams(res.headers.location).get('error')).toBe('login_required');
      expect(locationParams(res.headers.location).get('iss')).toBe('https://id.example.com');
    } finally {
      await custom.close();
    }
  });
});

describe('scope: OpenID requests ignore what they do not understand (OIDC Core 3.1.2.1)', () => {
  test('openid with unknown values: granted without them', async () => {
    const user = await makeUser(t);
    const client = await makeClient(t);
    const { agent } = await signIn(t, user);
    const obtained = await obtainCode(agent, client, { scope: 'openid profile email eduperson_entitlement https://other.example/api' });
    const res = await exchangeCode(t, client, obtained);
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('openid profile email');
    expect(decodeJwt(res.body.id_token).email).toBe(user.email);
  });

  test('openid with a known scope the client may not hold is still invalid_scope', async () => {
    const user = await makeUser(t);
    const client = await makeClient(t);
    const { agent } = await signIn(t, user);
    const res = await agent.get(authorizePath(authorizeParams(client, { scope: 'openid admin' }).params));
    expect(locationParams(res.headers.location).get('error')).toBe('invalid_scope');
  });

  test('without openid an unknown value is invalid_scope (RFC 6749 4.1.2.1)', async () => {
    const user = await makeUser(t);
    const client = await makeClient(t);
    const { agent } = await signIn(t, user);
    const res = await agent.get(authorizePath(authorizeParams(client, { scope: 'profile eduperson_entitlement' }).params));
    expect(res.status).toBe(302);
    expect(locationParams(res.headers.location).get('error')).toBe('invalid_scope');
  });

  test('only unknown values beside openid: openid alone is granted', async () => {
    const user = await makeUser(t);
    const client = await makeClient(t);
    const { agent } = await signIn(t, user);
    const res = await exchangeCode(t, client, await obtainCode(agent, client, { scope: 'openid foo' }));
    expect(res.body.scope).toBe('openid');
  });
});

describe('offline_access', () => {
  test('a client may be allowed it; consent lists it; the grant and the refresh keep it', async () => {
    const user = await makeUser(t);
    const client = await makeClient(t, { scopes: ['openid', 'profile', 'email', 'offline_access'] });
    const { agent } = await signIn(t, user);
    const { params, verifier } = authorizeParams(client, { scope: 'openid email offline_access' });
    const toConsent = await agent.get(authorizePath(params));
    const consentUrl = new URL(toConsent.headers.location);
    const page = await agent.get(consentUrl.pathname + consentUrl.search);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Stay connected to your account while you are not using the app');
    const info = await agent.get(`/api/oauth/consent-info?request_id=${consentUrl.searchParams.get('request_id')}`);
    expect(info.body.scopes).toEqual(['openid', 'email', 'offline_access']);
    const approved = await agent.post('/api/oauth/authorize/approve').send({ request_id: consentUrl.searchParams.get('request_id') });
    const code = locationParams(approved.body.redirect_url).get('code')!;
    const tokens = await exchangeCode(t, client, { code, verifier });
    expect(tokens.body.scope).toBe('openid email offline_access');
    expect(tokens.body.refresh_token).toBeTruthy();
  });

  test("the admin API accepts offline_access among a client's scopes; a client without it is refused it", async () => {
    const { bearer } = await makeSignedInUser(t, ['admin']);
    const created = await request(t.app)
      .post('/api/admin/oauth-clients')
      .set('Authorization', bearer)
      .send({ name: 'CLI', redirect_uris: ['http://localhost:4242/'], scopes: 'openid profile offline_access' });
    expect(created.status).toBe(201);
    expect(created.body.client.scopes).toEqual(['openid', 'profile', 'offline_access']);

    const user = await makeUser(t);
    const client = await makeClient(t);
    const { agent } = await signIn(t, user);
    const res = await agent.get(authorizePath(authorizeParams(client, { scope: 'openid offline_access' }).params));
    expect(locationParams(res.headers.location).get('error')).toBe('invalid_scope');
  });
});

describe('POST /consent never echoes unbounded input into Location', () => {
  test('a 90 kB request_id from a signed-out browser: the expired page, no redirect', async () => {
    const browser = request.agent(t.app);
    const csrf = await csrfFrom(browser, '/login');
    const huge = 'a'.repeat(90_000);
    const res = await browser.post('/consent').type('form').send({ request_id: huge, decision: 'approve', csrf });
    expect(res.status).toBe(404);
    expect(res.headers.location).toBeUndefined();
    expect(res.text).toContain('This request has expired');
  });

  test('GET /consent with a long request_id from a signed-out browser: no redirect either', async () => {
    const res = await request(t.app).get(`/consent?request_id=${'b'.repeat(8000)}`);
    expect(res.status).toBe(404);
    expect(res.headers.location).toBeUndefined();
  });

  test('a well-formed id from a signed-out browser still goes to sign-in and back', async () => {
    const browser = request.agent(t.app);
    const csrf = await csrfFrom(browser, '/login');
    const id = '0b3f3c1e-6a1e-4c59-9a55-3f2d7b7c9e10';
    const res = await browser.post('/consent').type('form').send({ request_id: id, decision: 'approve', csrf });
    expect(res.status).toBe(303);
    const returnTo = locationParams(res.headers.location).get('return_to');
    expect(returnTo).toBe(`${ISSUER}/consent?request_id=${id}`);
  });
});

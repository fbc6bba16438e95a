import { decodeJwt } from 'jose';
import request from 'supertest';
import { makeClient, makeSignedInUser, makeUser, signIn } from '../helpers/factories';
import { authorizeParams, authorizePath, basicAuth, csrfFrom, exchangeCode, locationParams, obtainCode } from '../helpers/oauth';
import { accessTokenHash } from '../../src/services/oidc/id-token.service';
import { createTestApp, type TestApp } from '../helpers/test-app';

/** OpenID Provider behaviour beyond the interop flows (CONTRACT §9). */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const api = () => request(t.app);

describe('discovery', () => {
  test.each(['/.well-known/openid-configuration', '/api/oauth/.well-known/openid-configuration'])(
    '%s: the CONTRACT §9 fields',
    async (path) => {
      const res = await api().get(path);
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('public, max-age=300');
      expect(res.body).toMatchObject({
        issuer: 'http://sso.test',
        authorization_endpoint: 'http://sso.test/api/oauth/authorize',
        token_endpoint: 'http://sso.test/api/oauth/token',
        userinfo_endpoint: 'http://sso.test/api/oauth/userinfo',
        jwks_uri: 'http://sso.test/api/oauth/jwks',
        end_session_endpoint: 'http://sso.test/api/oauth/logout',
        revocation_endpoint: 'http://sso.test/api/oauth/revoke',
        introspection_endpoint: 'http://sso.test/api/oauth/introspect',
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256', 'ES256'],
        code_challenge_methods_supported: ['S256'],
        prompt_values_supported: ['none', 'login', 'consent'],
        grant_types_supported: [
          'authorization_code',
          'refresh_token',
          'client_credentials',
          'urn:ietf:params:oauth:grant-type:device_code',
          'urn:ietf:params:oauth:grant-type:token-exchange',
        ],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
      });
      expect(res.body.claims_supported).toEqual(
        expect.arrayContaining(['sub', 'auth_time', 'nonce', 'at_hash', 'amr', 'sid', 'given_name']),
      );
    },
  );

  test.each(['/.well-known/oauth-authorization-server', '/api/oauth/.well-known/oauth-authorization-server'])(
    '%s: one issuer identifier with the OpenID document and the id_tokens, jwks_uri and introspection listed',
    async (path) => {
      const res = await api().get(path);
      const openid = await api().get('/.well-known/openid-configuration');
      expect(res.body.issuer).toBe('http://sso.test');
      expect(res.body.issuer).toBe(openid.body.issuer);
      expect(res.body).toMatchObject({
        jwks_uri: 'http://sso.test/api/oauth/jwks',
        introspection_endpoint: 'http://sso.test/api/oauth/introspect',
        authorization_response_iss_parameter_supported: true,
      });
      expect(openid.body.authorization_response_iss_parameter_supported).toBe(true);
      expect(res.body.scopes_supported).toContain('offline_access');
      expect(openid.body.scopes_supported).toContain('offline_access');
    },
  );

  test('OIDC_ISSUER names the issuer of both documents and the id_token; the HS256 tokens keep iss service-sso', async () => {
    const custom = await createTestApp({ env: { OIDC_ISSUER: 'https://id.example.com/' } });
    try {
      const spec = await request(custom.app).get('/.well-known/oauth-authorization-server');
      const openid = await request(custom.app).get('/.well-known/openid-configuration');
      expect(spec.body.issuer).toBe('https://id.example.com');
      expect(openid.body.issuer).toBe('https://id.example.com');
      const user = await makeUser(custom);
      const client = await makeClient(custom);
      const { agent } = await signIn(custom, user);
      const tokens = (await exchangeCode(custom, client, await obtainCode(agent, client))).body;
      expect(decodeJwt(tokens.id_token).iss).toBe('https://id.example.com');
      expect(decodeJwt(tokens.access_token)).toMatchObject({ iss: 'service-sso', aud: 'service' });
      expect(decodeJwt(tokens.refresh_token).iss).toBe('service-sso');
    } finally {
      await custom.close();
    }
  });
});

describe('id_token', () => {
  test('only for openid grants; nonce from the authorize request; at_hash of the access token', async () => {
    const user = await makeUser(t);
    const client = await makeClient(t, { scopes: ['openid', 'profile', 'email', 'read'] });
    const { agent } = await signIn(t, user);

    const plain = await obtainCode(agent, client, { scope: 'read' });
    const noOpenId = await exchangeCode(t, client, plain);
    expect(noOpenId.status).toBe(200);
    expect(noOpenId.body).not.toHaveProperty('id_token');

    const oidc = await obtainCode(agent, client, { scope: 'openid email', nonce: 'n-0S6_WzA2Mj' });
    const res = await exchangeCode(t, client, oidc);
    const claims = decodeJwt(res.body.id_token);
    expect(claims).toMatchObject({ iss: 'http://sso.test', sub: user.id, aud: client.clientId, nonce: 'n-0S6_WzA2Mj', email: user.email });
    expect(claims).not.toHaveProperty('name');
    // OIDC Core 3.1.3.6 worked example: at_hash of "jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y" is "77QmUPtjPfzWtF2AnpK9RQ".
    expect(accessTokenHash('jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y')).toBe('77QmUPtjPfzWtF2AnpK9RQ');
    expect(claims.at_hash).toBe(accessTokenHash(res.body.access_token));
  });

  test('auth_time is when the browser session signed in, not when the code was exchanged', async () => {
    const user = await makeUser(t);
    const client = await makeClient(t);
    // The sign-in happens between two readings of the test clock (no assumption on how long it takes).
    const beforeSignIn = Math.floor(t.clock.now().getTime() / 1000);
    const { agent } = await signIn(t, user);
    const afterSignIn = Math.floor(t.clock.now().getTime() / 1000);
    t.clock.advance(120);
    const code = await obtainCode(agent, client);
    const claims = decodeJwt((await exchangeCode(t, client, code)).body.id_token);
    expect(claims.auth_time).toBeGreaterThanOrEqual(beforeSignIn);
    expect(claims.auth_time).toBeLessThanOrEqual(afterSignIn);
    expect((claims.iat as number) - (claims.auth_time as number)).toBeGreaterThanOrEqual(120);
  });

  test("a refresh's id_token keeps the session's claims (sid, auth_time, amr) and carries the user's current profile", async () => {
    const user = await makeUser(t);
    const client = await makeClient(t, { scopes: ['openid', 'profile', 'email'] });
    const { agent } = await signIn(t, user);
    const first = await exchangeCode(t, client, await obtainCode(agent, client, { scope: 'openid profile email', nonce: 'n-1' }));
    const original = decodeJwt(first.body.id_token);

    t.clock.advance(300);
    const renamedAt = t.clock.now();
    await t.db('users').where({ id: user.id }).update({ first_name: 'Renamed', updated_at: renamedAt });
    const refresh = () => api().post('/api/oauth/token').set('Authorization', basicAuth(client.clientId, client.clientSecret)).type('form');
    const rotated = await refresh().send({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token });
    expect(rotated.status).toBe(200);
    const claims = decodeJwt(rotated.body.id_token);
    expect(claims).toMatchObject({
      sub: user.id,
      aud: client.clientId,
      sid: original.sid,
      auth_time: original.auth_time,
      amr: original.amr,
      email: user.email,
      email_verified: original.email_verified,
      given_name: 'Renamed',
      updated_at: Math.floor(renamedAt.getTime() / 1000),
    });
    expect(claims).not.toHaveProperty('nonce');
    expect(claims.at_hash).toBe(accessTokenHash(rotated.body.access_token));
    // A retry inside the grace window (the transactional path) answers the same claims.
    const retried = await refresh().send({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token });
    expect(retried.status).toBe(200);
    expect(decodeJwt(retried.body.id_token)).toMatchObject({ sid: original.sid, auth_time: original.auth_time, given_name: 'Renamed' });
  });
});

describe('authorize: prompt, max_age, login_hint', () => {
  const authorize = (
    agent: ReturnType<typeof request.agent> | undefined,
    client: { clientId: string; redirectUris: string[] },
    extra: Record<string, string>,
  ) => {
    const { params } = authorizeParams(client, extra);
    return (agent ?? api()).get(authorizePath(params));
  };

  test('prompt=none without a session: login_required to the redirect URI with the state', async () => {
    const client = await makeClient(t);
    const res = await authorize(undefined, client, { prompt: 'none', state: 's1' });
    expect(res.status).toBe(302);
    expect(res.headers.location.startsWith('https://app.test/callback?')).toBe(true);
    expect(Object.fromEntries(locationParams(res.headers.location))).toMatchObject({ error: 'login_required', state: 's1' });
  });

  test('prompt=none signed in without a grant: consent_required; with the grant: a code, no page', async () => {
    const user = await makeUser(t);
    const client = await makeClient(t);
    const { agent } = await signIn(t, user);
    const refused = await authorize(agent, client, { prompt: 'none' });
    expect(locationParams(refused.headers.location).get('error')).toBe('consent_required');
    await obtainCode(agent, client);
    const silent = await authorize(agent, client, { prompt: 'none' });
    expect(locationParams(silent.headers.location).get('code')).toBeTruthy();
  });

  test('prompt=consent shows consent again although granted', async () => {
    const user = await makeUser(t);
    const client = await makeClient(t);
    const { agent } = await signIn(t, user);
    await obtainCode(agent, client);
    const res = await authorize(agent, client, { prompt: 'consent' });
    expect(new URL(res.headers.location).pathname).toBe('/consent');
  });

  test('prompt=login sends a signed-in browser to the login page, which then returns without prompt=login', async () => {
    const user = await makeUser(t);
    const client = await makeClient(t);
    const { agent } = await signIn(t, user);
    const res = await authorize(agent, client, { prompt: 'login', login_hint: user.email });
    const login = new URL(res.headers.location);
    expect(login.pathname).toBe('/login');
    expect(login.searchParams.get('login_hint')).toBe(user.email);
    const returnTo = new URL(login.searchParams.get('return_to')!);
    expect(returnTo.pathname).toBe('/api/oauth/authorize');
    expect(returnTo.searchParams.has('prompt')).toBe(false);
    const page = await agent.get(login.pathname + login.search);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`value="${user.email}"`);
  });

  test('max_age: an older sign-in must sign in again; a fresh one passes; prompt=none answers login_required', async () => {
    const user = await makeUser(t);
    const client = await makeClient(t);
    const { agent } = await signIn(t, user);
    await obtainCode(agent, client);
    const fresh = await authorize(agent, client, { max_age: '300' });
    expect(locationParams(fresh.headers.location).get('code')).toBeTruthy();
    t.clock.advance(301);
    const stale = await authorize(agent, client, { max_age: '300' });
    const login = new URL(stale.headers.location);
    expect(login.pathname).toBe('/login');
    expect(new URL(login.searchParams.get('return_to')!).searchParams.has('max_age')).toBe(false);
    const silent = await authorize(agent, client, { max_age: '300', prompt: 'none' });
    expect(locationParams(silent.headers.location).get('error')).toBe('login_required');
  });

  test.each([
    [{ prompt: 'none login' }, /cannot be combined/],
    [{ prompt: 'select_account' }, /not supported/],
    [{ max_age: '-1' }, /max_age/],
    [{ nonce: 'x'.repeat(600) }, /nonce is too long/],
  ])('%j -> invalid_request redirected', async (extra, description) => {
    const user = await makeUser(t);
    const client = await makeClient(t);
    const { agent } = await signIn(t, user);
    const res = await authorize(agent, client, extra);
    const q = locationParams(res.headers.location);
    expect(q.get('error')).toBe('invalid_request');
    expect(q.get('error_description')).toMatch(description);
  });
});

describe('POST /api/oauth/introspect (RFC 7662)', () => {
  const introspect = (client: { clientId: string; clientSecret: string }, token: string, hint?: string) =>
    api()
      .post('/api/oauth/introspect')
      .set('Authorization', basicAuth(client.clientId, client.clientSecret))
      .type('form')
      .send({ token, ...(hint ? { token_type_hint: hint } : {}) });

  test('live access tokens of any client, and refresh tokens to their own client, are described; dead ones are inactive', async () => {
    const user = await makeUser(t);
    const app = await makeClient(t);
    const resourceServer = await makeClient(t, { name: 'Resource server' });
    const { agent, accessToken: firstParty, refreshToken: firstPartyRefresh } = await signIn(t, user);
    const tokens = (await exchangeCode(t, app, await obtainCode(agent, app))).body;

    const access = await introspect(resourceServer, tokens.access_token);
    expect(access.status).toBe(200);
    expect(access.headers['cache-control']).toBe('no-store');
    expect(access.body).toEqual({
      active: true,
      scope: 'openid profile email',
      client_id: app.clientId,
      sub: user.id,
      exp: expect.any(Number),
      iat: expect.any(Number),
      token_type: 'Bearer',
      sid: expect.any(String),
    });
    // CONTRACT §11: a refresh token is live only to its own client; to a resource server it is nothing.
    expect((await introspect(app, tokens.refresh_token, 'refresh_token')).body).toMatchObject({
      active: true,
      token_type: 'refresh_token',
    });
    expect((await introspect(resourceServer, tokens.refresh_token, 'refresh_token')).body).toEqual({ active: false });
    expect((await introspect(resourceServer, tokens.refresh_token)).body).toEqual({ active: false });
    expect((await introspect(resourceServer, firstParty)).body).toMatchObject({ active: true, client_id: null, scope: null, sub: user.id });
    expect((await introspect(resourceServer, firstPartyRefresh, 'refresh_token')).body).toEqual({ active: false });
    expect((await introspect(resourceServer, 'garbage')).body).toEqual({ active: false });

    // A rotated refresh token is no longer live; revoking the session kills the rest.
    const rotated = await api()
      .post('/api/oauth/token')
      .set('Authorization', basicAuth(app.clientId, app.clientSecret))
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
    expect((await introspect(app, tokens.refresh_token)).body).toEqual({ active: false });
    await api()
      .post('/api/oauth/revoke')
      .set('Authorization', basicAuth(app.clientId, app.clientSecret))
      .type('form')
      .send({ token: rotated.body.refresh_token });
    expect((await introspect(resourceServer, rotated.body.access_token)).body).toEqual({ active: false });
  });

  test('client authentication is required; token is required', async () => {
    const client = await makeClient(t);
    const bad = await api()
      .post('/api/oauth/introspect')
      .set('Authorization', basicAuth(client.clientId, 'wrong'))
      .type('form')
      .send({ token: 'x' });
    expect(bad.status).toBe(401);
    expect(bad.body.error).toBe('invalid_client');
    const inactive = await makeClient(t, { isActive: false });
    expect((await introspect(inactive, 'x')).status).toBe(401);
    const missing = await api()
      .post('/api/oauth/introspect')
      .set('Authorization', basicAuth(client.clientId, client.clientSecret))
      .type('form')
      .send({});
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe('invalid_request');
  });
});

describe('RP-initiated logout', () => {
  const AFTER = 'https://app.test/signed-out';

  async function signedInWithIdToken() {
    const user = await makeUser(t);
    const client = await makeClient(t, { postLogoutRedirectUris: [AFTER] });
    const { agent } = await signIn(t, user);
    const tokens = (await exchangeCode(t, client, await obtainCode(agent, client))).body;
    return { user, client, agent, tokens };
  }

  test('without id_token_hint a signed-in browser is asked first; the confirmation form is CSRF-protected', async () => {
    const { client, agent } = await signedInWithIdToken();
    const path = `/api/oauth/logout?${new URLSearchParams({ client_id: client.clientId, post_logout_redirect_uri: AFTER, state: 'st' })}`;
    const page = await agent.get(path);
    expect(page.status).toBe(200);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.text).toContain('Sign out?');
    expect(page.text).toContain('Test App');
    expect((await agent.get('/api/auth/me')).status).toBe(200);

    const csrf = await csrfFrom(agent, path);
    const forged = await agent
      .post('/api/oauth/logout')
      .type('form')
      .send({ confirm: 'yes', csrf: 'x'.repeat(43), client_id: client.clientId });
    expect(forged.status).toBe(403);
    expect((await agent.get('/api/auth/me')).status).toBe(200);

    const confirmed = await agent
      .post('/api/oauth/logout')
      .type('form')
      .send({ confirm: 'yes', csrf, client_id: client.clientId, post_logout_redirect_uri: AFTER, state: 'st' });
    expect(confirmed.status).toBe(303);
    expect(confirmed.headers.location).toBe(`${AFTER}?state=st`);
    expect((await agent.get('/api/auth/me')).status).toBe(401);
  });

  test('an unregistered post_logout_redirect_uri or a forged hint is a 400 page, never a redirect', async () => {
    const { client, agent, tokens } = await signedInWithIdToken();
    const evil = await agent.get(
      `/api/oauth/logout?${new URLSearchParams({ id_token_hint: tokens.id_token, post_logout_redirect_uri: 'https://evil.test/' })}`,
    );
    expect(evil.status).toBe(400);
    expect(evil.headers.location).toBeUndefined();
    const [h, p] = tokens.id_token.split('.');
    const forged = await agent.get(
      `/api/oauth/logout?${new URLSearchParams({ id_token_hint: `${h}.${p}.AAAA`, post_logout_redirect_uri: AFTER })}`,
    );
    expect(forged.status).toBe(400);
    const noClient = await agent.get(`/api/oauth/logout?${new URLSearchParams({ post_logout_redirect_uri: AFTER })}`);
    expect(noClient.status).toBe(400);
    const mismatch = await agent.get(`/api/oauth/logout?${new URLSearchParams({ id_token_hint: tokens.id_token, client_id: 'other' })}`);
    expect(mismatch.status).toBe(400);
    expect((await agent.get('/api/auth/me')).status).toBe(200);
    void client;
  });

  test("a hint naming another user than the browser's asks first; a client's cross-site form post continues as GET", async () => {
    const { tokens } = await signedInWithIdToken();
    const other = await makeUser(t);
    const { agent } = await signIn(t, other);
    const page = await agent.get(`/api/oauth/logout?${new URLSearchParams({ id_token_hint: tokens.id_token })}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Sign out?');
    const posted = await request(t.app).post('/api/oauth/logout').type('form').send({ id_token_hint: tokens.id_token, state: 'x' });
    expect(posted.status).toBe(303);
    expect(posted.headers.location).toBe(`/api/oauth/logout?${new URLSearchParams({ id_token_hint: tokens.id_token, state: 'x' })}`);
  });

  test('no browser session: the signed-out page, and the id_token_hint session of the client is ended', async () => {
    const { client, tokens } = await signedInWithIdToken();
    const res = await api().get(`/api/oauth/logout?${new URLSearchParams({ id_token_hint: tokens.id_token })}`);
    expect(res.status).toBe(200);
    expect(res.text).toContain('You are signed out');
    const refresh = await api()
      .post('/api/oauth/token')
      .set('Authorization', basicAuth(client.clientId, client.clientSecret))
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
    expect(refresh.body.error).toBe('invalid_grant');
  });
});

describe('admin API: post_logout_redirect_uris', () => {
  test('registered under the redirect URI rules, shown on the client, updatable', async () => {
    const { bearer } = await makeSignedInUser(t, ['admin']);
    const bad = await api()
      .post('/api/admin/oauth-clients')
      .set('Authorization', bearer)
      .send({ name: 'X', redirect_uri: 'https://x.test/cb', post_logout_redirect_uris: ['http://x.test/bye'] });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('validation_error');
    const created = await api()
      .post('/api/admin/oauth-clients')
      .set('Authorization', bearer)
      .send({ name: 'X', redirect_uri: 'https://x.test/cb', post_logout_redirect_uris: ['https://x.test/bye'] });
    expect(created.status).toBe(201);
    expect(created.body.client.post_logout_redirect_uris).toEqual(['https://x.test/bye']);
    const updated = await api()
      .put(`/api/admin/oauth-clients/${created.body.client.client_id}`)
      .set('Authorization', bearer)
      .send({ post_logout_redirect_uris: [] });
    expect(updated.body.client.post_logout_redirect_uris).toEqual([]);
  });
});

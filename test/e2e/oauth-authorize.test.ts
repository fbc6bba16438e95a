import request from 'supertest';
import { makeClient, makeUser, signIn } from '../helpers/factories';
import { authorizeParams, authorizePath, locationParams, obtainCode } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const REDIRECT = 'https://app.test/callback';

describe('GET /api/oauth/authorize > client and redirect_uri are checked first, never redirected', () => {
  const variants: Array<[string, string]> = [
    ['trailing slash', 'https://app.test/callback/'],
    ['added query', 'https://app.test/callback?x=1'],
    ['case change', 'https://APP.test/callback'],
    ['path case change', 'https://app.test/Callback'],
    ['explicit :443', 'https://app.test:443/callback'],
    ['userinfo @', 'https://app.test@evil.test/callback'],
    ['other host', 'https://evil.test/callback'],
    ['http instead of https', 'http://app.test/callback'],
  ];
  test.each(variants)('%s -> 400 JSON invalid_request, no Location', async (_name, redirectUri) => {
    const client = await makeClient(t, { redirectUris: [REDIRECT] });
    const { params } = authorizeParams(client, { redirect_uri: redirectUri });
    const res = await request(t.app).get(authorizePath(params));
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(res.body).toEqual({ error: 'invalid_request', error_description: 'redirect_uri is not registered for this client' });
  });

  test('a browser (Accept: text/html) gets a small HTML error page, no redirect', async () => {
    const client = await makeClient(t, { redirectUris: [REDIRECT] });
    const { params } = authorizeParams(client, { redirect_uri: 'https://evil.test/cb' });
    const res = await request(t.app).get(authorizePath(params)).set('Accept', 'text/html,application/xhtml+xml');
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.text).toContain('redirect_uri is not registered for this client');
    expect(res.text).not.toContain('evil.test');
  });

  test('unknown client -> 400', async () => {
    const res = await request(t.app).get(
      authorizePath({ ...authorizeParams({ clientId: 'client_nope', redirectUris: [REDIRECT] }).params }),
    );
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_request', error_description: 'Unknown or inactive client' });
  });

  test('inactive client -> 400 without redirect', async () => {
    const client = await makeClient(t, { redirectUris: [REDIRECT], isActive: false });
    const res = await request(t.app).get(authorizePath(authorizeParams(client).params));
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
  });

  test('missing redirect_uri -> 400', async () => {
    const client = await makeClient(t);
    const res = await request(t.app).get(authorizePath(authorizeParams(client, { redirect_uri: undefined }).params));
    expect(res.status).toBe(400);
    expect(res.body.error_description).toBe('redirect_uri is required');
  });

  test('client_id sent twice -> 400', async () => {
    const client = await makeClient(t);
    const { params } = authorizeParams(client);
    const res = await request(t.app).get(`${authorizePath(params)}&client_id=${client.clientId}`);
    expect(res.status).toBe(400);
  });
});

describe('GET /api/oauth/authorize > other errors redirect to redirect_uri with error and state', () => {
  async function expectRedirectError(overrides: Record<string, string | undefined>, error: string, description?: RegExp) {
    const client = await makeClient(t, { redirectUris: [REDIRECT], scopes: ['openid', 'profile', 'email'] });
    const { params, state } = authorizeParams(client, overrides);
    const res = await request(t.app).get(authorizePath(params));
    expect(res.status).toBe(302);
    expect(res.headers.location.startsWith(`${REDIRECT}?`)).toBe(true);
    const q = locationParams(res.headers.location);
    expect(q.get('error')).toBe(error);
    expect(q.get('state')).toBe(overrides.state === undefined && 'state' in overrides ? null : state);
    expect(q.get('error_description')).toBeTruthy();
    if (description) expect(q.get('error_description')).toMatch(description);
    expect(q.get('code')).toBeNull();
  }

  test('missing code_challenge -> invalid_request', () =>
    expectRedirectError({ code_challenge: undefined }, 'invalid_request', /code_challenge/));
  test('missing code_challenge_method -> invalid_request', () =>
    expectRedirectError({ code_challenge_method: undefined }, 'invalid_request', /S256/));
  test('code_challenge_method=plain -> invalid_request', () =>
    expectRedirectError({ code_challenge_method: 'plain' }, 'invalid_request', /S256/));
  test('malformed code_challenge -> invalid_request', () => expectRedirectError({ code_challenge: 'short' }, 'invalid_request'));
  test('response_type=token -> unsupported_response_type', () =>
    expectRedirectError({ response_type: 'token' }, 'unsupported_response_type'));
  test('missing response_type -> invalid_request', () => expectRedirectError({ response_type: undefined }, 'invalid_request'));
  test('scope outside the client scopes -> invalid_scope', () => expectRedirectError({ scope: 'openid admin' }, 'invalid_scope'));
  // OpenID requests ignore unknown values (OIDC Core 3.1.2.1, test/e2e/oauth-standards.test.ts); plain OAuth ones refuse them.
  test('unknown scope without openid -> invalid_scope', () => expectRedirectError({ scope: 'profile bogus' }, 'invalid_scope'));
  test('without state the error carries no state', () =>
    expectRedirectError({ state: undefined, code_challenge_method: 'plain' }, 'invalid_request'));
  test('missing scope -> invalid_request', () => expectRedirectError({ scope: undefined }, 'invalid_request', /scope is required/));
  test('empty scope -> invalid_request', () => expectRedirectError({ scope: '  ' }, 'invalid_request', /scope is required/));

  test('a registered redirect_uri with its own query keeps it', async () => {
    const client = await makeClient(t, { redirectUris: ['https://app.test/cb?tenant=7'] });
    const { params } = authorizeParams(client, { code_challenge_method: 'plain' });
    const res = await request(t.app).get(authorizePath(params));
    expect(res.status).toBe(302);
    const q = locationParams(res.headers.location);
    expect(q.get('tenant')).toBe('7');
    expect(q.get('error')).toBe('invalid_request');
  });
});

describe('GET /api/oauth/authorize > sign-in and consent', () => {
  test('not signed in -> 302 to {BASE_URL}/login?return_to=<the authorize URL>', async () => {
    const client = await makeClient(t);
    const path = authorizePath(authorizeParams(client).params);
    const res = await request(t.app).get(path);
    expect(res.status).toBe(302);
    const location = new URL(res.headers.location);
    expect(`${location.origin}${location.pathname}`).toBe('http://sso.test/login');
    expect(location.searchParams.get('return_to')).toBe(`http://sso.test${path}`);
    expect(res.headers['cache-control']).toBe('no-store');
  });

  test('signed in -> pending request bound to the user (10 min) and 302 to /consent', async () => {
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    const client = await makeClient(t);
    const { params } = authorizeParams(client, { scope: 'email openid' });
    const res = await agent.get(authorizePath(params));
    expect(res.status).toBe(302);
    const location = new URL(res.headers.location);
    expect(`${location.origin}${location.pathname}`).toBe('http://sso.test/consent');
    const row = await t
      .db('oauth_authorization_requests')
      .where({ id: location.searchParams.get('request_id') })
      .first();
    expect(row).toMatchObject({
      user_id: user.id,
      client_id: client.clientId,
      redirect_uri: params.redirect_uri,
      scope: 'openid email',
      state: params.state,
      code_challenge: params.code_challenge,
      consumed_at: null,
    });
    expect(new Date(row.expires_at).getTime() - new Date(row.created_at).getTime()).toBe(600_000);
  });

  test('only a refreshToken cookie (access cookie expired) still counts as signed in', async () => {
    const user = await makeUser(t);
    const { refreshToken } = await signIn(t, user);
    const client = await makeClient(t);
    const res = await request(t.app)
      .get(authorizePath(authorizeParams(client).params))
      .set('Cookie', `refreshToken=${refreshToken}`);
    expect(res.status).toBe(302);
    expect(new URL(res.headers.location).pathname).toBe('/consent');
    expect(String(res.headers['set-cookie'])).toMatch(/accessToken=/);
  });

  test('consent is skipped when the user already granted every requested scope', async () => {
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    const client = await makeClient(t);
    await obtainCode(agent, client, { scope: 'openid profile email' });
    const { params, state } = authorizeParams(client, { scope: 'openid email' });
    const res = await agent.get(authorizePath(params));
    expect(res.status).toBe(302);
    expect(res.headers.location.startsWith(`${client.redirectUris[0]}?`)).toBe(true);
    const q = locationParams(res.headers.location);
    expect(q.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get('state')).toBe(state);
  });

  // CONTRACT §23: PKCE (required on every request) carries the CSRF defence (RFC 9700 §2.1), so `state` is optional.
  test('without state (PKCE sent): consent, then the code comes back without a state; an existing grant answers at once', async () => {
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    const client = await makeClient(t);
    const { params, verifier } = authorizeParams(client, { state: undefined, scope: 'openid email' });
    const res = await agent.get(authorizePath(params));
    expect(res.status).toBe(302);
    const consent = new URL(res.headers.location);
    expect(consent.pathname).toBe('/consent');
    const row = await t
      .db('oauth_authorization_requests')
      .where({ id: consent.searchParams.get('request_id') })
      .first();
    expect(row).toMatchObject({ user_id: user.id, state: null });
    const approved = await agent.post('/api/oauth/authorize/approve').send({ request_id: row.id });
    expect(approved.status).toBe(200);
    const callback = new URL(approved.body.redirect_url);
    expect(callback.searchParams.has('state')).toBe(false);
    const code = callback.searchParams.get('code')!;
    const tokens = await request(t.app).post('/api/oauth/token').type('form').send({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: params.redirect_uri,
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
    expect(tokens.status).toBe(200);
    expect(tokens.body.scope).toBe('openid email');

    const again = await agent.get(authorizePath(authorizeParams(client, { state: undefined, scope: 'openid' }).params));
    const silent = locationParams(again.headers.location);
    expect(silent.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(silent.has('state')).toBe(false);
  });

  test('a broader scope than granted asks for consent again', async () => {
    const { agent } = await signIn(t, await makeUser(t));
    const client = await makeClient(t);
    await obtainCode(agent, client, { scope: 'openid' });
    const res = await agent.get(authorizePath(authorizeParams(client, { scope: 'openid email' }).params));
    expect(new URL(res.headers.location).pathname).toBe('/consent');
  });

  test('a Bearer token issued to an OAuth client does not count as a signed-in user', async () => {
    const { agent } = await signIn(t, await makeUser(t));
    const client = await makeClient(t);
    const { code, verifier } = await obtainCode(agent, client);
    const tokens = await request(t.app).post('/api/oauth/token').send({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: client.redirectUris[0],
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
    const res = await request(t.app)
      .get(authorizePath(authorizeParams(client).params))
      .set('Authorization', `Bearer ${tokens.body.access_token}`);
    expect(res.status).toBe(302);
    expect(new URL(res.headers.location).pathname).toBe('/login');
  });
});

describe('GET /api/auth/authorize (legacy)', () => {
  test('302 to /api/oauth/authorize with the same query string', async () => {
    const query = 'response_type=code&client_id=abc&redirect_uri=https%3A%2F%2Fapp.test%2Fcb&state=x%20y&code_challenge_method=plain';
    const res = await request(t.app).get(`/api/auth/authorize?${query}`);
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe(`/api/oauth/authorize?${query}`);
  });

  test('PKCE rules still apply through the legacy path', async () => {
    const client = await makeClient(t);
    const { params } = authorizeParams(client, { code_challenge_method: 'plain' });
    const first = await request(t.app).get(`/api/auth/authorize?${new URLSearchParams(params)}`);
    const second = await request(t.app).get(first.headers.location);
    expect(second.status).toBe(302);
    expect(locationParams(second.headers.location).get('error')).toBe('invalid_request');
  });
});

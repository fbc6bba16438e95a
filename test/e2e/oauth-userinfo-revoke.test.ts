import request from 'supertest';
import { makeClient, makeUser, signIn } from '../helpers/factories';
import { basicAuth, issueOAuthTokens } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const me = (accessToken: string) => request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${accessToken}`);
const userinfo = (accessToken: string) => request(t.app).get('/api/oauth/userinfo').set('Authorization', `Bearer ${accessToken}`);

async function tokensWithScope(scope: string) {
  const user = await makeUser(t, { firstName: 'Grace', lastName: 'Hopper' });
  const { agent } = await signIn(t, user);
  const client = await makeClient(t, { scopes: ['openid', 'profile', 'email', 'read'] });
  const tokens = await issueOAuthTokens(t, agent, client, { scope });
  return { user, client, tokens, agent };
}

describe('GET /api/oauth/userinfo', () => {
  test('openid only -> sub', async () => {
    const { user, tokens } = await tokensWithScope('openid');
    const res = await userinfo(tokens.access_token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ sub: user.id });
  });

  test('profile -> name and updated_at (epoch seconds)', async () => {
    const { user, tokens } = await tokensWithScope('openid profile');
    const res = await userinfo(tokens.access_token);
    expect(res.body).toEqual({ sub: user.id, name: 'Grace Hopper', updated_at: Math.floor(user.updatedAt.getTime() / 1000) });
  });

  test('email -> email and email_verified', async () => {
    const { user, tokens } = await tokensWithScope('email');
    const res = await userinfo(tokens.access_token);
    expect(res.body).toEqual({ sub: user.id, email: user.email, email_verified: true });
  });

  test('first-party token without scope -> every claim', async () => {
    const user = await makeUser(t, { firstName: 'Ada', lastName: 'L', emailVerified: false });
    const { accessToken } = await signIn(t, user);
    const res = await userinfo(accessToken);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ sub: user.id, name: 'Ada L', updated_at: expect.any(Number), email: user.email, email_verified: false });
  });

  test('POST works too (OpenID Connect Core §5.3.1)', async () => {
    const { user, tokens } = await tokensWithScope('openid');
    const res = await request(t.app).post('/api/oauth/userinfo').set('Authorization', `Bearer ${tokens.access_token}`);
    expect(res.body).toEqual({ sub: user.id });
  });

  test('invalid token -> 401 invalid_token with WWW-Authenticate: Bearer error="invalid_token"', async () => {
    const res = await userinfo('not-a-token');
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_token');
    expect(res.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"/);
  });

  test('a refresh token is not an access token -> 401', async () => {
    const { tokens } = await tokensWithScope('openid');
    expect((await userinfo(tokens.refresh_token)).status).toBe(401);
  });

  test('no token -> 401 invalid_token with a Bearer challenge', async () => {
    const res = await request(t.app).get('/api/oauth/userinfo');
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_token');
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
  });
});

describe('POST /api/oauth/revoke', () => {
  const revoke = (client: { clientId: string; clientSecret: string }, body: Record<string, string>) =>
    request(t.app).post('/api/oauth/revoke').set('Authorization', basicAuth(client.clientId, client.clientSecret)).type('form').send(body);

  test('refresh token -> 200 and its session (access token too) is revoked', async () => {
    const { client, tokens } = await tokensWithScope('openid');
    const res = await revoke(client, { token: tokens.refresh_token, token_type_hint: 'refresh_token' });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect((await me(tokens.access_token)).status).toBe(401);
    const again = await request(t.app)
      .post('/api/oauth/token')
      .set('Authorization', basicAuth(client.clientId, client.clientSecret))
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
    expect(again.body.error).toBe('invalid_grant');
  });

  test('access token without hint, JSON body with client_secret_post -> 200 and revoked', async () => {
    const { client, tokens } = await tokensWithScope('openid');
    const res = await request(t.app)
      .post('/api/oauth/revoke')
      .send({ token: tokens.access_token, client_id: client.clientId, client_secret: client.clientSecret });
    expect(res.status).toBe(200);
    expect((await userinfo(tokens.access_token)).status).toBe(401);
  });

  test('unknown and already revoked tokens -> 200', async () => {
    const { client, tokens } = await tokensWithScope('openid');
    expect((await revoke(client, { token: 'garbage' })).status).toBe(200);
    expect((await revoke(client, { token: tokens.refresh_token })).status).toBe(200);
    expect((await revoke(client, { token: tokens.refresh_token })).status).toBe(200);
  });

  test("another client's token -> 400 unauthorized_client and it stays valid", async () => {
    const { tokens } = await tokensWithScope('openid');
    const other = await makeClient(t);
    const res = await revoke(other, { token: tokens.refresh_token });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('unauthorized_client');
    expect((await me(tokens.access_token)).status).toBe(200);
    const accessRes = await revoke(other, { token: tokens.access_token, token_type_hint: 'access_token' });
    expect(accessRes.body.error).toBe('unauthorized_client');
    expect((await userinfo(tokens.access_token)).status).toBe(200);
  });

  test('a first-party token cannot be revoked by a client', async () => {
    const user = await makeUser(t);
    const { accessToken } = await signIn(t, user);
    const client = await makeClient(t);
    const res = await revoke(client, { token: accessToken });
    expect(res.status).toBe(400);
    expect((await me(accessToken)).status).toBe(200);
  });

  test('client authentication as at the token endpoint', async () => {
    const { client, tokens } = await tokensWithScope('openid');
    const res = await revoke({ clientId: client.clientId, clientSecret: 'wrong' }, { token: tokens.refresh_token });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
    expect(res.headers['www-authenticate']).toMatch(/^Basic/);
    expect((await me(tokens.access_token)).status).toBe(200);
  });

  test('missing token -> invalid_request', async () => {
    const client = await makeClient(t);
    const res = await revoke(client, {});
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });
});

describe('discovery', () => {
  // Spec §2.10's constants, with CONTRACT §11's amendments: the issuer is OIDC_ISSUER (default BASE_URL) like the
  // OpenID document and the id_tokens, jwks_uri and introspection_endpoint are listed, offline_access is supported,
  // RFC 9207's iss parameter is announced, and the OpenID fields an id_token's validation needs are there too.
  const expected = {
    issuer: 'http://sso.test',
    authorization_endpoint: 'http://sso.test/api/oauth/authorize',
    token_endpoint: 'http://sso.test/api/oauth/token',
    userinfo_endpoint: 'http://sso.test/api/oauth/userinfo',
    revocation_endpoint: 'http://sso.test/api/oauth/revoke',
    jwks_uri: 'http://sso.test/api/oauth/jwks',
    introspection_endpoint: 'http://sso.test/api/oauth/introspect',
    end_session_endpoint: 'http://sso.test/api/oauth/logout',
    device_authorization_endpoint: 'http://sso.test/api/oauth/device_authorization',
    response_types_supported: ['code'],
    grant_types_supported: [
      'authorization_code',
      'refresh_token',
      'client_credentials',
      'urn:ietf:params:oauth:grant-type:device_code',
      'urn:ietf:params:oauth:grant-type:token-exchange',
    ],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
    code_challenge_methods_supported: ['S256'],
    scopes_supported: ['openid', 'profile', 'email', 'read', 'write', 'admin', 'offline_access'],
    claims_supported: ['sub', 'name', 'email', 'email_verified', 'updated_at'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['RS256', 'ES256'],
    authorization_response_iss_parameter_supported: true,
    // Issue 34: PAR, and client authentication at every endpoint that authenticates clients, with the assertion algorithms.
    pushed_authorization_request_endpoint: 'http://sso.test/api/oauth/par',
    require_pushed_authorization_requests: false,
    token_endpoint_auth_signing_alg_values_supported: ['RS256', 'PS256', 'ES256', 'EdDSA', 'Ed25519'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
    revocation_endpoint_auth_signing_alg_values_supported: ['RS256', 'PS256', 'ES256', 'EdDSA', 'Ed25519'],
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'],
    introspection_endpoint_auth_signing_alg_values_supported: ['RS256', 'PS256', 'ES256', 'EdDSA', 'Ed25519'],
    // Issue 34: DPoP proofs (RFC 9449 §5.1).
    dpop_signing_alg_values_supported: ['ES256', 'RS256', 'PS256', 'EdDSA', 'Ed25519'],
  };
  test.each(['/api/oauth/.well-known/oauth-authorization-server', '/.well-known/oauth-authorization-server'])(
    '%s has every constant of spec §2.10',
    async (path) => {
      const res = await request(t.app).get(path);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(expected);
    },
  );

  test("values follow BASE_URL; the issuer is OIDC_ISSUER, never ISSUER (the HS256 tokens' iss)", async () => {
    const other = await createTestApp({ env: { BASE_URL: 'https://login.example.com/', ISSUER: 'something-else' } });
    try {
      const res = await request(other.app).get('/.well-known/oauth-authorization-server');
      expect(res.body.issuer).toBe('https://login.example.com');
      expect(res.body.token_endpoint).toBe('https://login.example.com/api/oauth/token');
    } finally {
      await other.close();
    }
  });
});

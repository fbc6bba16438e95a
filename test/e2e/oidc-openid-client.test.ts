import request from 'supertest';
import { makeClient, makeUser } from '../helpers/factories';
import { createListeningTestApp } from '../helpers/oauth';
import { loadEsm, signInAndApprove, type OpenIdClient } from '../helpers/oidc';
import type { TestApp } from '../helpers/test-app';

/**
 * Interop: openid-client v6, unchanged, drives the whole OpenID Connect flow against the real listening server with
 * the default configuration: the spec's discovery document -> authorize -> hosted login -> consent -> callback ->
 * id_token validated by the library (signature from jwks_uri, iss, aud, exp, nonce, at_hash) -> userinfo -> refresh -> RP-initiated logout.
 * allowInsecureRequests is openid-client's documented switch for a plain-http issuer: the test server has no TLS.
 */
const client = loadEsm<OpenIdClient>('openid-client');

let t: TestApp;
let baseUrl: string;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ t, baseUrl, stop } = await createListeningTestApp());
});
afterAll(async () => {
  await stop();
});

const REDIRECT_URI = 'http://localhost:8765/callback';
const AFTER_LOGOUT = 'http://localhost:8765/signed-out';

/**
 * Configured from the spec's RFC 8414 discovery document at its /api/oauth path, with the default configuration: its
 * issuer (BASE_URL) is the one the library then requires of the id_token and of the RFC 9207 `iss` parameter.
 */
async function discover(rp: { clientId: string; clientSecret: string }) {
  const documentUrl = new URL(`${baseUrl}/api/oauth/.well-known/oauth-authorization-server`);
  return client.discovery(documentUrl, rp.clientId, rp.clientSecret, undefined, { execute: [client.allowInsecureRequests] });
}

describe('openid-client v6 as relying party', () => {
  test('discovery, code flow with nonce, id_token, userinfo, refresh, logout', async () => {
    const user = await makeUser(t, { firstName: 'Ada', lastName: 'Lovelace' });
    const rp = await makeClient(t, { redirectUris: [REDIRECT_URI], postLogoutRedirectUris: [AFTER_LOGOUT] });
    const config = await discover(rp);
    expect(config.serverMetadata().issuer).toBe(baseUrl);

    const codeVerifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const authorizationUrl = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid profile email',
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    const { callback, browser } = await signInAndApprove(baseUrl, authorizationUrl, user);
    expect(callback.origin + callback.pathname).toBe(REDIRECT_URI);

    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: codeVerifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({
      iss: baseUrl,
      sub: user.id,
      aud: rp.clientId,
      nonce,
      name: 'Ada Lovelace',
      given_name: 'Ada',
      family_name: 'Lovelace',
      email: user.email,
      email_verified: true,
      amr: ['pwd'],
    });
    expect(typeof claims.auth_time).toBe('number');
    expect(typeof claims.sid).toBe('string');
    expect(claims.exp - claims.iat).toBe(3600);

    const userinfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
    expect(userinfo).toMatchObject({ sub: user.id, email: user.email, name: 'Ada Lovelace' });

    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    const refreshedClaims = refreshed.claims()!;
    expect(refreshedClaims).toMatchObject({ iss: baseUrl, sub: user.id, aud: rp.clientId, auth_time: claims.auth_time, sid: claims.sid });
    expect(refreshedClaims.nonce).toBeUndefined();
    expect(refreshed.access_token).not.toBe(tokens.access_token);

    const endSession = client.buildEndSessionUrl(config, {
      id_token_hint: refreshed.id_token!,
      post_logout_redirect_uri: AFTER_LOGOUT,
      state: 'bye-1',
    });
    expect(endSession.href.startsWith(`${baseUrl}/api/oauth/logout?`)).toBe(true);
    const loggedOut = await browser.get(endSession.pathname + endSession.search);
    expect(loggedOut.status).toBe(302);
    expect(loggedOut.headers.location).toBe(`${AFTER_LOGOUT}?state=bye-1`);
    expect(String(loggedOut.headers['set-cookie'])).toMatch(/accessToken=;/);

    // The browser's SSO session and the client's tokens are both gone.
    expect((await browser.get('/api/auth/me')).status).toBe(401);
    await expect(client.refreshTokenGrant(config, refreshed.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(client.fetchUserInfo(config, refreshed.access_token, claims.sub)).rejects.toBeTruthy();
  });

  test('ES256 keys (ID_TOKEN_ALG=ES256) validate the same way', async () => {
    const es = await createListeningTestApp({ ID_TOKEN_ALG: 'ES256' });
    try {
      const user = await makeUser(es.t);
      const rp = await makeClient(es.t, { redirectUris: [REDIRECT_URI] });
      // RFC 8414 discovery from the issuer identifier (/.well-known/oauth-authorization-server at the root): the
      // library checks that the document's issuer is the URL it was given.
      const config = await client.discovery(new URL(es.baseUrl), rp.clientId, rp.clientSecret, undefined, {
        algorithm: 'oauth2',
        execute: [client.allowInsecureRequests],
      });
      expect(config.serverMetadata().issuer).toBe(es.baseUrl);
      const codeVerifier = client.randomPKCECodeVerifier();
      const state = client.randomState();
      const authorizationUrl = client.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT_URI,
        scope: 'openid',
        code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
        state,
      });
      const { callback } = await signInAndApprove(es.baseUrl, authorizationUrl, user);
      const tokens = await client.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: codeVerifier,
        expectedState: state,
        idTokenExpected: true,
      });
      const header = JSON.parse(Buffer.from(tokens.id_token!.split('.')[0]!, 'base64url').toString()) as { alg: string; kid: string };
      expect(header.alg).toBe('ES256');
      const jwks = await request(es.baseUrl).get('/api/oauth/jwks');
      expect(jwks.body.keys.map((k: { kid: string }) => k.kid)).toContain(header.kid);
      // openid scope alone: no profile or email claims.
      expect(tokens.claims()).not.toHaveProperty('email');
      expect(tokens.claims()).not.toHaveProperty('name');
    } finally {
      await es.stop();
    }
  });
});

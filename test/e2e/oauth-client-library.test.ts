import request from 'supertest';
import { makeClient, makeUser } from '../helpers/factories';
import { createListeningTestApp, loadOAuth4WebApi, type TestClient } from '../helpers/oauth';
import type { TestApp } from '../helpers/test-app';

/**
 * The whole flow driven by an independent OAuth client library (oauth4webapi) over real HTTP, configured from the
 * spec's RFC 8414 discovery document with the default configuration and the spec's example scope
 * `openid profile email`: authorize -> login -> consent -> code -> token (id_token validated) -> userinfo -> refresh
 * -> revoke.
 */
const oauth = loadOAuth4WebApi();

let t: TestApp;
let baseUrl: string;
let stop: () => Promise<void>;
let as: import('oauth4webapi', { with: { 'resolution-mode': 'import' } }).AuthorizationServer;

beforeAll(async () => {
  ({ t, baseUrl, stop } = await createListeningTestApp());
  // The spec's discovery document, as a strict RFC 8414 client reads it with the default configuration: the library
  // checks that its `issuer` is the URL it was told (RFC 8414 §3.3), then holds every id_token and RFC 9207 `iss`
  // authorization-response parameter to that issuer.
  const response = await fetch(`${baseUrl}/api/oauth/.well-known/oauth-authorization-server`);
  as = await oauth.processDiscoveryResponse(new URL(baseUrl), response);
});
afterAll(async () => {
  await stop();
});

const insecure = { [oauth.allowInsecureRequests]: true };

/** What a browser does between the authorization URL and the callback: sign in, approve. */
async function browserApproves(authorizationUrl: URL, user: { email: string; password: string }): Promise<URL> {
  const browser = request.agent(baseUrl);
  const toLogin = await browser.get(authorizationUrl.pathname + authorizationUrl.search);
  expect(toLogin.status).toBe(302);
  const loginUrl = new URL(toLogin.headers.location);
  expect(loginUrl.origin).toBe(baseUrl);
  const loginPage = await browser.get(loginUrl.pathname + loginUrl.search);
  const csrf = /name="csrf" value="([^"]+)"/.exec(loginPage.text)![1];
  const returnTo = loginUrl.searchParams.get('return_to')!;
  const signedIn = await browser
    .post('/login')
    .type('form')
    .send({ email: user.email, password: user.password, return_to: returnTo, csrf });
  expect(signedIn.status).toBe(303);
  expect(signedIn.headers.location).toBe(authorizationUrl.href);
  const toConsent = await browser.get(authorizationUrl.pathname + authorizationUrl.search);
  expect(toConsent.status).toBe(302);
  const consentUrl = new URL(toConsent.headers.location);
  const consentPage = await browser.get(consentUrl.pathname + consentUrl.search);
  expect(consentPage.status).toBe(200);
  // The CSRF value is a new one since the sign-in (rotated): the consent page's.
  const consentCsrf = /name="csrf" value="([^"]+)"/.exec(consentPage.text)![1];
  const approved = await browser
    .post('/consent')
    .type('form')
    .send({ request_id: consentUrl.searchParams.get('request_id'), decision: 'approve', csrf: consentCsrf });
  expect(approved.status).toBe(303);
  return new URL(approved.headers.location);
}

async function runFlow(client: TestClient, clientAuth: ReturnType<typeof oauth.ClientSecretBasic>) {
  const user = await makeUser(t, { firstName: 'Lib', lastName: 'Tester' });
  const oauthClient = { client_id: client.clientId };
  const redirectUri = client.redirectUris[0]!;
  const codeVerifier = oauth.generateRandomCodeVerifier();
  const codeChallenge = await oauth.calculatePKCECodeChallenge(codeVerifier);
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();

  const authorizationUrl = new URL(as.authorization_endpoint!);
  authorizationUrl.searchParams.set('client_id', client.clientId);
  authorizationUrl.searchParams.set('redirect_uri', redirectUri);
  authorizationUrl.searchParams.set('response_type', 'code');
  authorizationUrl.searchParams.set('scope', 'openid profile email');
  authorizationUrl.searchParams.set('nonce', nonce);
  authorizationUrl.searchParams.set('code_challenge', codeChallenge);
  authorizationUrl.searchParams.set('code_challenge_method', 'S256');
  authorizationUrl.searchParams.set('state', state);

  const callback = await browserApproves(authorizationUrl, user);
  // RFC 9207: discovery announced the iss parameter, so the library requires it and compares it with the issuer.
  expect(callback.searchParams.get('iss')).toBe(baseUrl);
  const params = oauth.validateAuthResponse(as, oauthClient, callback, state);

  const tokenResponse = await oauth.authorizationCodeGrantRequest(as, oauthClient, clientAuth, params, redirectUri, codeVerifier, insecure);
  const tokens = await oauth.processAuthorizationCodeResponse(as, oauthClient, tokenResponse, {
    expectedNonce: nonce,
    requireIdToken: true,
  });
  expect(tokens).toMatchObject({ token_type: 'bearer', expires_in: 3600, scope: 'openid profile email' });
  const claims = oauth.getValidatedIdTokenClaims(tokens)!;
  expect(claims).toMatchObject({ iss: baseUrl, sub: user.id, aud: client.clientId, nonce, email: user.email });

  const userinfoResponse = await oauth.userInfoRequest(as, oauthClient, tokens.access_token, insecure);
  const info = await oauth.processUserInfoResponse(as, oauthClient, user.id, userinfoResponse);
  expect(info).toMatchObject({ sub: user.id, name: 'Lib Tester', email: user.email, email_verified: true });

  const refreshResponse = await oauth.refreshTokenGrantRequest(as, oauthClient, clientAuth, tokens.refresh_token!, insecure);
  const refreshed = await oauth.processRefreshTokenResponse(as, oauthClient, refreshResponse);
  expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
  expect(refreshed.scope).toBe('openid profile email');
  expect(oauth.getValidatedIdTokenClaims(refreshed)).toMatchObject({ iss: baseUrl, sub: user.id });

  const revokeResponse = await oauth.revocationRequest(as, oauthClient, clientAuth, refreshed.refresh_token!, {
    ...insecure,
    additionalParameters: { token_type_hint: 'refresh_token' },
  });
  await oauth.processRevocationResponse(revokeResponse);

  const afterRevoke = await oauth.userInfoRequest(as, oauthClient, refreshed.access_token, insecure);
  await expect(oauth.processUserInfoResponse(as, oauthClient, user.id, afterRevoke)).rejects.toMatchObject({
    code: oauth.WWW_AUTHENTICATE_CHALLENGE,
  });
  const reuse = await oauth.refreshTokenGrantRequest(as, oauthClient, clientAuth, refreshed.refresh_token!, insecure);
  await expect(oauth.processRefreshTokenResponse(as, oauthClient, reuse)).rejects.toMatchObject({ error: 'invalid_grant' });
}

test('oauth4webapi: full flow with client_secret_basic', async () => {
  const client = await makeClient(t, { redirectUris: ['http://127.0.0.1:9/callback'] });
  await runFlow(client, oauth.ClientSecretBasic(client.clientSecret));
});

test('oauth4webapi: full flow with client_secret_post', async () => {
  const client = await makeClient(t, { redirectUris: ['https://app.test/cb'] });
  await runFlow(client, oauth.ClientSecretPost(client.clientSecret));
});

test('oauth4webapi: a wrong verifier is rejected as invalid_grant "Invalid PKCE verifier"', async () => {
  const client = await makeClient(t);
  const user = await makeUser(t);
  const oauthClient = { client_id: client.clientId };
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const authorizationUrl = new URL(as.authorization_endpoint!);
  authorizationUrl.search = new URLSearchParams({
    client_id: client.clientId,
    redirect_uri: client.redirectUris[0]!,
    response_type: 'code',
    scope: 'openid',
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  }).toString();
  const callback = await browserApproves(authorizationUrl, user);
  const params = oauth.validateAuthResponse(as, oauthClient, callback, state);
  const response = await oauth.authorizationCodeGrantRequest(
    as,
    oauthClient,
    oauth.ClientSecretBasic(client.clientSecret),
    params,
    client.redirectUris[0]!,
    oauth.generateRandomCodeVerifier(),
    insecure,
  );
  await expect(oauth.processAuthorizationCodeResponse(as, oauthClient, response)).rejects.toMatchObject({
    error: 'invalid_grant',
    error_description: 'Invalid PKCE verifier',
  });
});

import request from 'supertest';
import { makeSignedInUser, makeUser } from '../helpers/factories';
import { createListeningTestApp, loadOAuth4WebApi } from '../helpers/oauth';
import { loadEsm, signInAndApprove, type OpenIdClient } from '../helpers/oidc';
import type { TestApp } from '../helpers/test-app';

/**
 * CONTRACT §13 with real client libraries over real HTTP, unchanged: openid-client v6 registers itself
 * (`dynamicClientRegistration`, open mode) and then signs a user in with code + PKCE, validates the id_token and
 * refreshes; oauth4webapi registers with an initial access token (token mode) and manages its registration (RFC 7592).
 * allowInsecureRequests is the libraries' documented switch for a plain-http issuer: the test server has no TLS.
 */
const client = loadEsm<OpenIdClient>('openid-client');
const oauth = loadOAuth4WebApi();

const REDIRECT_URI = 'http://127.0.0.1:8765/callback';

describe('openid-client v6: dynamic registration then a public-client code flow (CLIENT_REGISTRATION=open)', () => {
  let t: TestApp;
  let baseUrl: string;
  let stop: () => Promise<void>;
  beforeAll(async () => {
    ({ t, baseUrl, stop } = await createListeningTestApp({ CLIENT_REGISTRATION: 'open' }));
  });
  afterAll(async () => {
    await stop();
  });

  test('discovers registration_endpoint, registers, signs in with PKCE, validates the id_token, refreshes', async () => {
    const config = await client.dynamicClientRegistration(
      new URL(baseUrl),
      {
        client_name: 'CLI agent',
        redirect_uris: [REDIRECT_URI],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        scope: 'openid profile email offline_access',
      },
      client.None(),
      { execute: [client.allowInsecureRequests] },
    );
    const registered = config.clientMetadata();
    expect(registered.client_id).toMatch(/^client_/);
    expect(registered.client_secret).toBeUndefined();
    expect(registered.token_endpoint_auth_method).toBe('none');
    expect(typeof registered.registration_access_token).toBe('string');
    expect(config.serverMetadata().registration_endpoint).toBe(`${baseUrl}/api/oauth/register`);

    const user = await makeUser(t, { firstName: 'Dyn', lastName: 'Amic' });
    const codeVerifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const authorizationUrl = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid profile email offline_access',
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    const { callback } = await signInAndApprove(baseUrl, authorizationUrl, user);
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: codeVerifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    expect(tokens.claims()).toMatchObject({ iss: baseUrl, sub: user.id, aud: registered.client_id, nonce, name: 'Dyn Amic' });
    expect(tokens.scope).toBe('openid profile email offline_access');

    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect(refreshed.claims()).toMatchObject({ sub: user.id, aud: registered.client_id });

    // The admin API sees the client as dynamic, used (a token was issued).
    const admin = (await makeSignedInUser(t, ['admin'])).bearer;
    const detail = await request(t.app).get(`/api/admin/oauth-clients/${registered.client_id}`).set('Authorization', admin);
    expect(detail.body.client).toMatchObject({ registration: 'dynamic', type: 'public', name: 'CLI agent' });
    const row = await t.db('oauth_clients').where({ client_id: registered.client_id }).first();
    expect(row.last_used_at).not.toBeNull();
  });
});

describe('oauth4webapi: registration with an initial access token, then RFC 7592 management (CLIENT_REGISTRATION=token)', () => {
  let t: TestApp;
  let baseUrl: string;
  let stop: () => Promise<void>;
  beforeAll(async () => {
    ({ t, baseUrl, stop } = await createListeningTestApp({ CLIENT_REGISTRATION: 'token' }));
  });
  afterAll(async () => {
    await stop();
  });

  const insecure = { [oauth.allowInsecureRequests]: true };

  test('a confidential client registers with the token an admin minted, then reads and deletes its registration', async () => {
    const admin = (await makeSignedInUser(t, ['admin'])).bearer;
    const minted = await request(t.app).post('/api/admin/registration-tokens').set('Authorization', admin).send({ max_uses: 1 });
    expect(minted.status).toBe(201);

    const as = await oauth.processDiscoveryResponse(
      new URL(baseUrl),
      await oauth.discoveryRequest(new URL(baseUrl), { algorithm: 'oauth2', ...insecure }),
    );
    expect(as.registration_endpoint).toBe(`${baseUrl}/api/oauth/register`);

    const withoutToken = await oauth.dynamicClientRegistrationRequest(as, { redirect_uris: ['https://rp.example.com/cb'] }, insecure);
    await expect(oauth.processDynamicClientRegistrationResponse(withoutToken)).rejects.toMatchObject({ status: 401 });

    const response = await oauth.dynamicClientRegistrationRequest(
      as,
      { client_name: 'Partner portal', redirect_uris: ['https://rp.example.com/cb'], token_endpoint_auth_method: 'client_secret_basic' },
      { initialAccessToken: minted.body.token, ...insecure },
    );
    const registered = await oauth.processDynamicClientRegistrationResponse(response);
    expect(registered).toMatchObject({ client_name: 'Partner portal', token_endpoint_auth_method: 'client_secret_basic' });
    expect(typeof registered.client_secret).toBe('string');

    // The token had one use: a second registration with it is refused.
    const again = await oauth.dynamicClientRegistrationRequest(
      as,
      { redirect_uris: ['https://rp.example.com/cb'] },
      { initialAccessToken: minted.body.token, ...insecure },
    );
    await expect(oauth.processDynamicClientRegistrationResponse(again)).rejects.toMatchObject({ status: 401 });

    const uri = registered.registration_client_uri as string;
    const rat = registered.registration_access_token as string;
    const read = await fetch(uri, { headers: { Authorization: `Bearer ${rat}` } });
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ client_id: registered.client_id, client_name: 'Partner portal' });
    const deleted = await fetch(uri, { method: 'DELETE', headers: { Authorization: `Bearer ${rat}` } });
    expect(deleted.status).toBe(204);
    expect((await fetch(uri, { headers: { Authorization: `Bearer ${rat}` } })).status).toBe(401);
  });
});

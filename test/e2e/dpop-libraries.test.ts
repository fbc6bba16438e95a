import request from 'supertest';
import { makeClientKey, signAssertion } from '../helpers/client-keys';
import { claimsOf } from '../helpers/dpop';
import { makeSignedInUser, makeUser } from '../helpers/factories';
import { createListeningTestApp, loadOAuth4WebApi } from '../helpers/oauth';
import { loadEsm, signInAndApprove, type OpenIdClient } from '../helpers/oidc';
import type { TestApp } from '../helpers/test-app';

/**
 * Issue 34, DPoP (RFC 9449) driven by client libraries nobody here wrote, unchanged, over real HTTP against the
 * listening server: oauth4webapi's `DPoP()` handle and openid-client's `getDPoPHandle()` make every proof. The code
 * grant, userinfo with the bound token, the refresh of a public client's bound refresh token, client_credentials (with
 * a secret and with private_key_jwt), and the server-nonce round trip (`dpop_nonce_required`), which both libraries
 * must complete by themselves. Hand-made proofs for every refusal are in dpop.test.ts.
 */
const oauth = loadOAuth4WebApi();
const oidc = loadEsm<OpenIdClient>('openid-client');

let t: TestApp;
let baseUrl: string;
let stop: () => Promise<void>;
let bearer: string;

beforeAll(async () => {
  ({ t, baseUrl, stop } = await createListeningTestApp());
  ({ bearer } = await makeSignedInUser(t, ['super_admin']));
});
afterAll(async () => {
  await stop?.();
});

const REDIRECT = 'https://rp.example.test/callback';
const insecure = { [oauth.allowInsecureRequests]: true } as const;
type Client = Parameters<typeof oauth.validateAuthResponse>[1];

async function adminClient(extra: Record<string, unknown>) {
  const res = await request(t.app)
    .post('/api/admin/oauth-clients')
    .set('Authorization', bearer)
    .send({ name: 'DPoP app', redirect_uris: [REDIRECT], scopes: ['openid', 'profile', 'email'], ...extra });
  expect(res.status).toBe(201);
  return { clientId: res.body.client.client_id as string, clientSecret: res.body.client_secret as string | undefined };
}

async function discover() {
  return oauth.processDiscoveryResponse(new URL(baseUrl), await oauth.discoveryRequest(new URL(baseUrl), insecure));
}

/** Retries once when the server asks for a (new) nonce, as oauth4webapi's documentation shows. */
async function withNonceRetry<T>(attempt: () => Promise<T>): Promise<T> {
  try {
    return await attempt();
  } catch (err) {
    if (oauth.isDPoPNonceError(err)) return attempt();
    throw err;
  }
}

/** fetch that remembers what the server answered (status and the OAuth error or DPoP challenge), for the nonce round trip. */
function recordingFetch() {
  const seen: Array<{ url: string; status: number; error?: string; challenge?: string | null }> = [];
  const fetcher = async (url: string | URL, init: object = {}) => {
    const res = await fetch(url, init as RequestInit);
    const entry: (typeof seen)[number] = { url: String(url), status: res.status, challenge: res.headers.get('www-authenticate') };
    if (res.status === 400) entry.error = ((await res.clone().json()) as { error?: string }).error;
    seen.push(entry);
    return res;
  };
  return { seen, fetcher };
}

/** oauth4webapi's code flow for a public client with PKCE, its proofs made by `DPoP`. */
async function oauth4webapiCodeFlow(
  as: Awaited<ReturnType<typeof discover>>,
  client: Client,
  DPoP: ReturnType<typeof oauth.DPoP>,
  options: Record<PropertyKey, unknown> = insecure,
) {
  const verifier = oauth.generateRandomCodeVerifier();
  const url = new URL(as.authorization_endpoint!);
  url.search = new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope: 'openid profile',
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state: 'o4w',
  }).toString();
  const user = await makeUser(t);
  const { callback } = await signInAndApprove(baseUrl, url, user);
  const params = oauth.validateAuthResponse(as, client, callback, 'o4w');
  const tokens = await withNonceRetry(async () =>
    oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, verifier, { ...options, DPoP }),
    ),
  );
  return { tokens, user };
}

describe('oauth4webapi', () => {
  test('a public client: code grant, userinfo with the bound token, refresh with the same key only', async () => {
    const as = await discover();
    expect(as.dpop_signing_alg_values_supported).toEqual(['ES256', 'RS256', 'PS256', 'EdDSA', 'Ed25519']);
    const { clientId } = await adminClient({ type: 'public', token_endpoint_auth_method: 'none' });
    const client: Client = { client_id: clientId };
    const keyPair = await oauth.generateKeyPair('ES256');
    const DPoP = oauth.DPoP(client, keyPair);
    const jkt = await DPoP.calculateThumbprint();

    const { tokens, user } = await oauth4webapiCodeFlow(as, client, DPoP);
    expect(tokens.token_type).toBe('dpop');
    expect(claimsOf(tokens.access_token).cnf).toEqual({ jkt });
    expect(claimsOf(tokens.refresh_token!).cnf).toEqual({ jkt });

    const info = await oauth.processUserInfoResponse(
      as,
      client,
      user.id,
      await oauth.userInfoRequest(as, client, tokens.access_token, { ...insecure, DPoP }),
    );
    expect(info).toMatchObject({ sub: user.id });
    // The same token without a proof, as a Bearer token: refused with a DPoP challenge.
    const asBearer = await fetch(as.userinfo_endpoint!, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(asBearer.status).toBe(401);
    expect(asBearer.headers.get('www-authenticate')).toMatch(/^DPoP error="invalid_token"/);

    // The bound refresh token refreshes only with a proof of its key; a refusal does not spend it.
    const otherKey = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
    const refused = await oauth
      .refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, { ...insecure, DPoP: otherKey })
      .then((res) => oauth.processRefreshTokenResponse(as, client, res))
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(oauth.ResponseBodyError);
    expect((refused as InstanceType<typeof oauth.ResponseBodyError>).error).toBe('invalid_dpop_proof');
    const withoutProof = await oauth
      .refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure)
      .then((res) => oauth.processRefreshTokenResponse(as, client, res))
      .catch((err: unknown) => err);
    expect((withoutProof as InstanceType<typeof oauth.ResponseBodyError>).error).toBe('invalid_dpop_proof');

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, { ...insecure, DPoP }),
    );
    expect(refreshed.token_type).toBe('dpop');
    expect(claimsOf(refreshed.access_token).cnf).toEqual({ jkt });
    expect(claimsOf(refreshed.refresh_token!).cnf).toEqual({ jkt });
    const again = await oauth.processUserInfoResponse(
      as,
      client,
      user.id,
      await oauth.userInfoRequest(as, client, refreshed.access_token, { ...insecure, DPoP }),
    );
    expect(again.sub).toBe(user.id);
  });

  test('client_credentials authenticated by private_key_jwt, the token bound by DPoP (an Ed25519 proof key, which oauth4webapi labels alg Ed25519)', async () => {
    const signing = await makeClientKey('ES256');
    const { clientId } = await adminClient({
      grant_types: ['client_credentials'],
      redirect_uris: [],
      scopes: ['read'],
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [signing.publicJwk] },
    });
    const as = await discover();
    const client: Client = { client_id: clientId };
    const DPoP = oauth.DPoP(client, await oauth.generateKeyPair('EdDSA'));
    const tokens = await oauth.processClientCredentialsResponse(
      as,
      client,
      await oauth.clientCredentialsGrantRequest(
        as,
        client,
        oauth.PrivateKeyJwt({ key: signing.privateKey, kid: signing.kid }),
        new URLSearchParams({ scope: 'read' }),
        { ...insecure, DPoP },
      ),
    );
    expect(tokens.token_type).toBe('dpop');
    expect(claimsOf(tokens.access_token).cnf).toEqual({ jkt: await DPoP.calculateThumbprint() });
    const described = await request(t.app)
      .post('/api/oauth/introspect')
      .type('form')
      .send({
        token: tokens.access_token,
        client_id: clientId,
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: await signAssertion(signing, { iss: clientId, sub: clientId, aud: baseUrl }),
      });
    expect(described.body).toMatchObject({ active: true, token_type: 'DPoP', cnf: { jkt: await DPoP.calculateThumbprint() } });
  });
});

describe('openid-client', () => {
  test('a confidential client: code grant, userinfo, /api/auth/me and a refresh, every proof by getDPoPHandle', async () => {
    const { clientId, clientSecret } = await adminClient({});
    const config = await oidc.discovery(new URL(baseUrl), clientId, clientSecret, undefined, { execute: [oidc.allowInsecureRequests] });
    const keyPair = await oidc.randomDPoPKeyPair('ES256');
    const DPoP = oidc.getDPoPHandle(config, keyPair);
    const jkt = await DPoP.calculateThumbprint();
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid profile',
      state: 'oc',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const user = await makeUser(t);
    const { callback } = await signInAndApprove(baseUrl, url, user);
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 'oc' }, undefined, {
      DPoP,
    });
    expect(tokens.token_type).toBe('dpop');
    expect(claimsOf(tokens.access_token).cnf).toEqual({ jkt });
    // A confidential client's refresh token is bound to its authentication, not to the key (RFC 9449 §5).
    expect(claimsOf(tokens.refresh_token!).cnf).toBeUndefined();

    const info = await oidc.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub, { DPoP });
    expect(info.sub).toBe(user.id);
    const me = await oidc.fetchProtectedResource(
      config,
      tokens.access_token,
      new URL(`${baseUrl}/api/auth/me`),
      'GET',
      undefined,
      undefined,
      {
        DPoP,
      },
    );
    expect(me.status).toBe(200);
    expect(((await me.json()) as { user: { id: string } }).user.id).toBe(user.id);

    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP });
    expect(refreshed.token_type).toBe('dpop');
    expect(claimsOf(refreshed.access_token).cnf).toEqual({ jkt });
  });

  test('client_credentials with a secret and an RS256 proof key', async () => {
    const { clientId, clientSecret } = await adminClient({ grant_types: ['client_credentials'], redirect_uris: [], scopes: ['read'] });
    const config = await oidc.discovery(new URL(baseUrl), clientId, clientSecret, undefined, { execute: [oidc.allowInsecureRequests] });
    const DPoP = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('RS256'));
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'read' }, { DPoP });
    expect(tokens.token_type).toBe('dpop');
    expect(claimsOf(tokens.access_token).cnf).toEqual({ jkt: await DPoP.calculateThumbprint() });
  });
});

describe('server nonces (dpop_nonce_required): each library completes the use_dpop_nonce round trip itself', () => {
  beforeAll(async () => {
    const set = await request(t.app).patch('/api/admin/settings').set('Authorization', bearer).send({ dpop_nonce_required: true });
    expect(set.status).toBe(200);
    await t.ctx.settings.refresh();
  });
  afterAll(async () => {
    await request(t.app).patch('/api/admin/settings').set('Authorization', bearer).send({ dpop_nonce_required: false });
    await t.ctx.settings.refresh();
  });

  test('oauth4webapi: token endpoint and userinfo each answer use_dpop_nonce once, the retry carries the nonce', async () => {
    const { clientId } = await adminClient({ type: 'public', token_endpoint_auth_method: 'none' });
    const client: Client = { client_id: clientId };
    const recorder = recordingFetch();
    const options = { ...insecure, [oauth.customFetch]: recorder.fetcher };
    const as = await discover();
    // A handle of its own per test: the nonce it learns is what the second request proves.
    const DPoP = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
    const { tokens, user } = await oauth4webapiCodeFlow(as, client, DPoP, options);
    expect(tokens.token_type).toBe('dpop');
    const info = await withNonceRetry(async () =>
      oauth.processUserInfoResponse(
        as,
        client,
        user.id,
        await oauth.userInfoRequest(as, client, tokens.access_token, { ...options, DPoP }),
      ),
    );
    expect(info.sub).toBe(user.id);
    const tokenCalls = recorder.seen.filter((s) => s.url === as.token_endpoint);
    expect(tokenCalls.map((s) => [s.status, s.error])).toEqual([
      [400, 'use_dpop_nonce'],
      [200, undefined],
    ]);
    // The nonce learned at the token endpoint is the server's nonce for the whole server (stateless, one per minute):
    // userinfo accepts the proof that carries it at the first attempt.
    const userinfoCalls = recorder.seen.filter((s) => s.url === as.userinfo_endpoint);
    expect(userinfoCalls.map((s) => s.status)).toEqual([200]);

    // The refresh of the bound refresh token carries the nonce too.
    const refreshed = await withNonceRetry(async () =>
      oauth.processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, { ...options, DPoP }),
      ),
    );
    expect(refreshed.token_type).toBe('dpop');
  });

  test('oauth4webapi: a resource that asks for the nonce first (401 use_dpop_nonce challenge) is retried', async () => {
    const { clientId } = await adminClient({ type: 'public', token_endpoint_auth_method: 'none' });
    const client: Client = { client_id: clientId };
    const as = await discover();
    const tokenKey = await oauth.generateKeyPair('ES256');
    const { tokens, user } = await oauth4webapiCodeFlow(as, client, oauth.DPoP(client, tokenKey));
    // A fresh handle of the same key knows no nonce yet: userinfo challenges it.
    const recorder = recordingFetch();
    const DPoP = oauth.DPoP(client, tokenKey);
    const info = await withNonceRetry(async () =>
      oauth.processUserInfoResponse(
        as,
        client,
        user.id,
        await oauth.userInfoRequest(as, client, tokens.access_token, { ...insecure, [oauth.customFetch]: recorder.fetcher, DPoP }),
      ),
    );
    expect(info.sub).toBe(user.id);
    expect(recorder.seen.map((s) => s.status)).toEqual([401, 200]);
    expect(recorder.seen[0]!.challenge).toMatch(/^DPoP error="use_dpop_nonce"/);
  });

  test('openid-client retries by itself at the token endpoint and at userinfo', async () => {
    const { clientId, clientSecret } = await adminClient({});
    const config = await oidc.discovery(new URL(baseUrl), clientId, clientSecret, undefined, { execute: [oidc.allowInsecureRequests] });
    const recorder = recordingFetch();
    config[oidc.customFetch] = recorder.fetcher;
    const DPoP = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid',
      state: 'nonce',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const user = await makeUser(t);
    const { callback } = await signInAndApprove(baseUrl, url, user);
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 'nonce' }, undefined, {
      DPoP,
    });
    expect(tokens.token_type).toBe('dpop');
    const info = await oidc.fetchUserInfo(config, tokens.access_token, user.id, { DPoP });
    expect(info.sub).toBe(user.id);
    const tokenCalls = recorder.seen.filter((s) => s.url.endsWith('/api/oauth/token'));
    expect(tokenCalls.map((s) => [s.status, s.error])).toEqual([
      [400, 'use_dpop_nonce'],
      [200, undefined],
    ]);
  });
});

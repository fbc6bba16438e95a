import request from 'supertest';
import { makeAppClient } from '../helpers/apps';
import { makeClientKey, type ClientKeyPair } from '../helpers/client-keys';
import { claimsOf, dpopProof, thumbprintOf } from '../helpers/dpop';
import { makeSignedInUser, makeUser } from '../helpers/factories';
import { createListeningTestApp, loadOAuth4WebApi, obtainCode, pkcePair } from '../helpers/oauth';
import { loadEsm, signInAndApprove, type OpenIdClient } from '../helpers/oidc';
import type { TestApp } from '../helpers/test-app';

/**
 * Issue 34, authorization code binding to a DPoP key (RFC 9449 §10, §10.1): `dpop_jkt` at /api/oauth/authorize and at
 * the PAR endpoint, or a DPoP proof sent with the pushed request, binds the code to the key; the code is then exchanged
 * only with a proof of that key (none: `invalid_dpop_proof`; another key: `invalid_grant`), and a refusal does not
 * spend it. oauth4webapi and openid-client drive the flows that libraries offer; the refusals are made by hand.
 */
const oauth = loadOAuth4WebApi();
const oidc = loadEsm<OpenIdClient>('openid-client');

let t: TestApp;
let baseUrl: string;
let stop: () => Promise<void>;
let bearer: string;
let key: ClientKeyPair;
let other: ClientKeyPair;

beforeAll(async () => {
  ({ t, baseUrl, stop } = await createListeningTestApp());
  ({ bearer } = await makeSignedInUser(t, ['super_admin']));
  key = await makeClientKey('ES256');
  other = await makeClientKey('ES256');
});
afterAll(async () => {
  await stop?.();
});

const REDIRECT = 'https://rp.example.test/callback';
const insecure = { [oauth.allowInsecureRequests]: true } as const;
type Client = Parameters<typeof oauth.validateAuthResponse>[1];

const tokenUrl = () => `${baseUrl}/api/oauth/token`;
const parUrl = () => `${baseUrl}/api/oauth/par`;
const proof = (k: ClientKeyPair, htu = tokenUrl(), extra: { nonce?: string } = {}) => dpopProof(k, { htu, now: t.clock.now(), ...extra });

const token = (form: Record<string, string>, headers: Record<string, string> = {}) =>
  request(t.app).post('/api/oauth/token').set(headers).type('form').send(form);
const par = (form: Record<string, string>, headers: Record<string, string> = {}) =>
  request(t.app).post('/api/oauth/par').set(headers).type('form').send(form);

function pushedParams(clientId: string, extra: Record<string, string> = {}) {
  const { verifier, challenge } = pkcePair();
  return {
    verifier,
    form: {
      client_id: clientId,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid',
      state: 'st',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ...extra,
    },
  };
}

/** A signed-in browser sends the pushed request's request_uri to authorize and approves: the code. */
async function codeFor(clientId: string, requestUri: string) {
  const url = new URL(`${baseUrl}/api/oauth/authorize`);
  url.search = new URLSearchParams({ client_id: clientId, request_uri: requestUri }).toString();
  const { callback } = await signInAndApprove(baseUrl, url, await makeUser(t));
  return callback.searchParams.get('code')!;
}

async function publicClient() {
  return makeAppClient(t, { type: 'public', redirectUris: [REDIRECT] });
}

describe('dpop_jkt at /api/oauth/authorize', () => {
  test('the code is exchanged only with a proof of that key; neither refusal spends it (consent page and reused consent)', async () => {
    const client = await publicClient();
    const jkt = await thumbprintOf(key);
    const { agent } = await makeSignedInUser(t);
    // First the consent page (a pending request carries dpop_jkt), then the reused consent (the code is issued at once).
    for (const round of ['consent page', 'reused consent']) {
      const { code, verifier } = await obtainCode(agent, client, { dpop_jkt: jkt });
      const form = { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: client.clientId };
      const bare = await token(form);
      expect([round, bare.status, bare.body.error]).toEqual([round, 400, 'invalid_dpop_proof']);
      expect(bare.body.error_description).toMatch(/dpop_jkt/);
      const wrongKey = await token(form, { DPoP: await proof(other) });
      expect([round, wrongKey.status, wrongKey.body.error]).toEqual([round, 400, 'invalid_grant']);
      const ok = await token(form, { DPoP: await proof(key) });
      expect([round, ok.status, ok.body.token_type]).toEqual([round, 200, 'DPoP']);
      expect(claimsOf(ok.body.access_token).cnf).toEqual({ jkt });
      expect(claimsOf(ok.body.refresh_token).cnf).toEqual({ jkt });
      // Spent by the exchange that succeeded.
      expect((await token(form, { DPoP: await proof(key) })).body.error).toBe('invalid_grant');
    }
    const stored = await t.db('oauth_codes').where({ client_id: client.clientId });
    expect(stored.map((row: { dpop_jkt: string }) => row.dpop_jkt)).toEqual([jkt, jkt]);
  });

  test('a confidential client too: the bound code refuses its authenticated exchange without a proof', async () => {
    const client = await makeAppClient(t, { redirectUris: [REDIRECT] });
    const { agent } = await makeSignedInUser(t);
    const { code, verifier } = await obtainCode(agent, client, { dpop_jkt: await thumbprintOf(key) });
    const auth = { Authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}` };
    const form = { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT };
    expect((await token(form, auth)).body.error).toBe('invalid_dpop_proof');
    expect((await token(form, { ...auth, DPoP: await proof(key) })).body.token_type).toBe('DPoP');
  });

  test.each([
    ['not a thumbprint', { dpop_jkt: 'abc' }],
    ['44 characters', { dpop_jkt: 'A'.repeat(44) }],
    ['padding', { dpop_jkt: `${'A'.repeat(42)}=` }],
  ])('a malformed dpop_jkt (%s) is invalid_request at the redirect URI', async (_label, extra) => {
    const client = await publicClient();
    const { agent } = await makeSignedInUser(t);
    const res = await agent.get('/api/oauth/authorize').query({ ...pushedParams(client.clientId).form, ...extra });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.location as string);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('error_description')).toMatch(/dpop_jkt/);
  });

  test('dpop_jkt sent twice is invalid_request', async () => {
    const client = await publicClient();
    const { agent } = await makeSignedInUser(t);
    const jkt = await thumbprintOf(key);
    const query = new URLSearchParams(pushedParams(client.clientId).form);
    query.append('dpop_jkt', jkt);
    query.append('dpop_jkt', jkt);
    const res = await agent.get(`/api/oauth/authorize?${query}`);
    expect(new URL(res.headers.location as string).searchParams.get('error')).toBe('invalid_request');
  });

  test('oauth4webapi: dpop_jkt from the DPoP handle (calculateThumbprint), then the code grant with the same handle', async () => {
    const as = await oauth.processDiscoveryResponse(new URL(baseUrl), await oauth.discoveryRequest(new URL(baseUrl), insecure));
    const registered = await publicClient();
    const client: Client = { client_id: registered.clientId };
    const DPoP = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
    const verifier = oauth.generateRandomCodeVerifier();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      dpop_jkt: await DPoP.calculateThumbprint(),
    }).toString();
    const { callback } = await signInAndApprove(baseUrl, url, await makeUser(t));
    const params = oauth.validateAuthResponse(as, client, callback, oauth.expectNoState);
    // Another key's handle is refused with invalid_grant (and the code survives it).
    const wrong = await oauth
      .authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, verifier, {
        ...insecure,
        DPoP: oauth.DPoP(client, await oauth.generateKeyPair('ES256')),
      })
      .then((res) => oauth.processAuthorizationCodeResponse(as, client, res))
      .catch((err: unknown) => err);
    expect((wrong as InstanceType<typeof oauth.ResponseBodyError>).error).toBe('invalid_grant');
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, verifier, { ...insecure, DPoP }),
    );
    expect(tokens.token_type).toBe('dpop');
    expect(claimsOf(tokens.access_token).cnf).toEqual({ jkt: await DPoP.calculateThumbprint() });
  });
});

describe('at the PAR endpoint (RFC 9449 §10.1)', () => {
  test('a DPoP proof with the pushed request binds the code to its key', async () => {
    const client = await publicClient();
    const { verifier, form } = pushedParams(client.clientId);
    const pushed = await par(form, { DPoP: await proof(key, parUrl()) });
    expect(pushed.status).toBe(201);
    const code = await codeFor(client.clientId, pushed.body.request_uri);
    const exchange = {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT,
      client_id: client.clientId,
    };
    expect((await token(exchange)).body.error).toBe('invalid_dpop_proof');
    expect((await token(exchange, { DPoP: await proof(other) })).body.error).toBe('invalid_grant');
    const ok = await token(exchange, { DPoP: await proof(key) });
    expect(ok.status).toBe(200);
    expect(claimsOf(ok.body.access_token).cnf).toEqual({ jkt: await thumbprintOf(key) });
  });

  test('dpop_jkt pushed without a proof binds it too; with a proof of the same key it is accepted', async () => {
    const client = await publicClient();
    const jkt = await thumbprintOf(key);
    const alone = pushedParams(client.clientId, { dpop_jkt: jkt });
    const pushedAlone = await par(alone.form);
    expect(pushedAlone.status).toBe(201);
    const code = await codeFor(client.clientId, pushedAlone.body.request_uri);
    const form = {
      grant_type: 'authorization_code',
      code,
      code_verifier: alone.verifier,
      redirect_uri: REDIRECT,
      client_id: client.clientId,
    };
    expect((await token(form, { DPoP: await proof(other) })).body.error).toBe('invalid_grant');
    expect((await token(form, { DPoP: await proof(key) })).status).toBe(200);

    const both = await par(pushedParams(client.clientId, { dpop_jkt: jkt }).form, { DPoP: await proof(key, parUrl()) });
    expect(both.status).toBe(201);
  });

  test('refusals: dpop_jkt of another key than the proof’s, a bad proof, a malformed dpop_jkt (400, nothing stored)', async () => {
    const client = await publicClient();
    const before = await t.db('oauth_pushed_requests').where({ client_id: client.clientId }).count({ n: '*' });
    const mismatch = await par(pushedParams(client.clientId, { dpop_jkt: await thumbprintOf(other) }).form, {
      DPoP: await proof(key, parUrl()),
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error).toBe('invalid_dpop_proof');
    expect(mismatch.body.error_description).toMatch(/dpop_jkt/);

    const forTheTokenEndpoint = await par(pushedParams(client.clientId).form, { DPoP: await proof(key) });
    expect(forTheTokenEndpoint.status).toBe(400);
    expect(forTheTokenEndpoint.body.error).toBe('invalid_dpop_proof');
    const notAProof = await par(pushedParams(client.clientId).form, { DPoP: 'not-a-jws' });
    expect(notAProof.body.error).toBe('invalid_dpop_proof');
    const replayed = await proof(key, parUrl());
    expect((await par(pushedParams(client.clientId).form, { DPoP: replayed })).status).toBe(201);
    expect((await par(pushedParams(client.clientId).form, { DPoP: replayed })).body.error).toBe('invalid_dpop_proof');

    const malformed = await par(pushedParams(client.clientId, { dpop_jkt: 'short' }).form);
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toBe('invalid_request');
    const after = await t.db('oauth_pushed_requests').where({ client_id: client.clientId }).count({ n: '*' });
    expect(Number(after[0]!.n) - Number(before[0]!.n)).toBe(1);
  });

  test('oauth4webapi: pushedAuthorizationRequest with its DPoP handle, then the code grant with it', async () => {
    const as = await oauth.processDiscoveryResponse(new URL(baseUrl), await oauth.discoveryRequest(new URL(baseUrl), insecure));
    const registered = await publicClient();
    const client: Client = { client_id: registered.clientId };
    const DPoP = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
    const verifier = oauth.generateRandomCodeVerifier();
    const params = new URLSearchParams({
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: 'par-dpop',
    });
    const pushed = await oauth.processPushedAuthorizationResponse(
      as,
      client,
      await oauth.pushedAuthorizationRequest(as, client, oauth.None(), params, { ...insecure, DPoP }),
    );
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({ client_id: client.client_id, request_uri: pushed.request_uri }).toString();
    const { callback } = await signInAndApprove(baseUrl, url, await makeUser(t));
    const callbackParams = oauth.validateAuthResponse(as, client, callback, 'par-dpop');
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), callbackParams, REDIRECT, verifier, { ...insecure, DPoP }),
    );
    expect(tokens.token_type).toBe('dpop');
  });

  test('openid-client: buildAuthorizationUrlWithPAR with a DPoP handle (confidential client); another key cannot redeem', async () => {
    const res = await request(t.app)
      .post('/api/admin/oauth-clients')
      .set('Authorization', bearer)
      .send({ name: 'PAR DPoP', redirect_uris: [REDIRECT], scopes: ['openid'] });
    const config = await oidc.discovery(new URL(baseUrl), res.body.client.client_id, res.body.client_secret, undefined, {
      execute: [oidc.allowInsecureRequests],
    });
    const DPoP = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
    const verifier = oidc.randomPKCECodeVerifier();
    const url = await oidc.buildAuthorizationUrlWithPAR(
      config,
      {
        redirect_uri: REDIRECT,
        scope: 'openid',
        state: 'oc-par',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      },
      { DPoP },
    );
    const { callback } = await signInAndApprove(baseUrl, url, await makeUser(t));
    const wrong = await oidc
      .authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 'oc-par' }, undefined, {
        DPoP: oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256')),
      })
      .catch((err: unknown) => err);
    expect((wrong as { error?: string }).error).toBe('invalid_grant');
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 'oc-par' }, undefined, {
      DPoP,
    });
    expect(tokens.token_type).toBe('dpop');
  });

  describe('with server nonces (dpop_nonce_required)', () => {
    beforeAll(async () => {
      await request(t.app).patch('/api/admin/settings').set('Authorization', bearer).send({ dpop_nonce_required: true });
      await t.ctx.settings.refresh();
    });
    afterAll(async () => {
      await request(t.app).patch('/api/admin/settings').set('Authorization', bearer).send({ dpop_nonce_required: false });
      await t.ctx.settings.refresh();
    });

    test('a proof without the nonce is 400 use_dpop_nonce with a DPoP-Nonce header; with it, 201 and a fresh nonce', async () => {
      const client = await publicClient();
      const first = await par(pushedParams(client.clientId).form, { DPoP: await proof(key, parUrl()) });
      expect(first.status).toBe(400);
      expect(first.body.error).toBe('use_dpop_nonce');
      const nonce = first.headers['dpop-nonce'] as string;
      expect(nonce).toMatch(/^[\w-]{43}$/);
      const second = await par(pushedParams(client.clientId).form, { DPoP: await proof(key, parUrl(), { nonce }) });
      expect(second.status).toBe(201);
      expect(second.headers['dpop-nonce']).toMatch(/^[\w-]{43}$/);
    });

    test('openid-client repeats the pushed request with the nonce by itself', async () => {
      const res = await request(t.app)
        .post('/api/admin/oauth-clients')
        .set('Authorization', bearer)
        .send({ name: 'PAR DPoP nonce', redirect_uris: [REDIRECT], scopes: ['openid'] });
      const config = await oidc.discovery(new URL(baseUrl), res.body.client.client_id, res.body.client_secret, undefined, {
        execute: [oidc.allowInsecureRequests],
      });
      const DPoP = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
      const verifier = oidc.randomPKCECodeVerifier();
      const url = await oidc.buildAuthorizationUrlWithPAR(
        config,
        {
          redirect_uri: REDIRECT,
          scope: 'openid',
          code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
        },
        { DPoP },
      );
      const { callback } = await signInAndApprove(baseUrl, url, await makeUser(t));
      const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier }, undefined, { DPoP });
      expect(tokens.token_type).toBe('dpop');
    });
  });
});

test('discovery is unchanged: RFC 9449 defines no metadata for dpop_jkt', async () => {
  const res = await request(t.app).get('/.well-known/oauth-authorization-server');
  expect(Object.keys(res.body).filter((k) => /dpop/.test(k))).toEqual(['dpop_signing_alg_values_supported']);
});

import fc from 'fast-check';
import request from 'supertest';
import { makeAppClient } from '../helpers/apps';
import { makeClientKey } from '../helpers/client-keys';
import { makeSignedInUser, makeUser } from '../helpers/factories';
import { createListeningTestApp, loadOAuth4WebApi, pkcePair } from '../helpers/oauth';
import { loadEsm, signInAndApprove, type OpenIdClient } from '../helpers/oidc';
import type { TestApp } from '../helpers/test-app';

/**
 * Issue 34, pushed authorization requests (RFC 9126): openid-client and oauth4webapi push their request and send the
 * browser with the request_uri alone; every refusal of the endpoint and of the request_uri, and the per-client and
 * global requirement.
 */
const oidc = loadEsm<OpenIdClient>('openid-client');
const oauth = loadOAuth4WebApi();

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

async function adminClient(extra: Record<string, unknown> = {}) {
  const res = await request(t.app)
    .post('/api/admin/oauth-clients')
    .set('Authorization', bearer)
    .send({ name: 'PAR app', redirect_uris: [REDIRECT], scopes: ['openid', 'profile'], ...extra });
  expect(res.status).toBe(201);
  return { clientId: res.body.client.client_id as string, clientSecret: res.body.client_secret as string | undefined };
}

const par = (form: Record<string, string>) => request(t.app).post('/api/oauth/par').type('form').send(form);

function authorizeParams(clientId: string, extra: Record<string, string> = {}) {
  return {
    client_id: clientId,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid',
    state: 'st',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    ...extra,
  };
}

test('openid-client (confidential, client_secret_basic): buildAuthorizationUrlWithPAR, sign-in on the way, code exchange', async () => {
  const { clientId, clientSecret } = await adminClient();
  const config = await oidc.discovery(new URL(baseUrl), clientId, clientSecret, undefined, { execute: [oidc.allowInsecureRequests] });
  const verifier = oidc.randomPKCECodeVerifier();
  const url = await oidc.buildAuthorizationUrlWithPAR(config, {
    redirect_uri: REDIRECT,
    scope: 'openid profile',
    state: 'par-state',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  // Only client_id and request_uri travel through the browser.
  expect([...url.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
  expect(url.searchParams.get('request_uri')).toMatch(/^urn:ietf:params:oauth:request_uri:/);
  const { callback } = await signInAndApprove(baseUrl, url, await makeUser(t));
  const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 'par-state' });
  expect(tokens.claims()).toMatchObject({ aud: clientId });

  // The request_uri was spent by that authorization.
  const again = await request(t.app)
    .get(url.pathname + url.search)
    .set('Accept', 'application/json');
  expect(again.status).toBe(400);
  expect(again.body.error).toBe('invalid_request');
});

test('oauth4webapi (private_key_jwt client): pushedAuthorizationRequest, then the code grant, both by assertion', async () => {
  const key = await makeClientKey();
  const { clientId } = await adminClient({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [key.publicJwk] } });
  const options = { [oauth.allowInsecureRequests]: true };
  const as = await oauth.processDiscoveryResponse(new URL(baseUrl), await oauth.discoveryRequest(new URL(baseUrl), options));
  expect(as.pushed_authorization_request_endpoint).toBe(`${baseUrl}/api/oauth/par`);
  const client = { client_id: clientId };
  const auth = oauth.PrivateKeyJwt({ key: key.privateKey, kid: key.kid });
  const verifier = oauth.generateRandomCodeVerifier();
  const params = new URLSearchParams({
    redirect_uri: REDIRECT,
    scope: 'openid',
    response_type: 'code',
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state: 'o4w',
  });
  const pushed = await oauth.processPushedAuthorizationResponse(
    as,
    client,
    await oauth.pushedAuthorizationRequest(as, client, auth, params, options),
  );
  expect(pushed.expires_in).toBe(60);
  const url = new URL(as.authorization_endpoint!);
  url.searchParams.set('client_id', clientId);
  url.searchParams.set('request_uri', pushed.request_uri);
  const { callback } = await signInAndApprove(baseUrl, url, await makeUser(t));
  const callbackParams = oauth.validateAuthResponse(as, client, callback, 'o4w');
  const response = await oauth.authorizationCodeGrantRequest(as, client, auth, callbackParams, REDIRECT, verifier, options);
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
  expect(typeof tokens.access_token).toBe('string');
});

test('a public client pushes with client_id alone', async () => {
  const client = await makeAppClient(t, { type: 'public', redirectUris: [REDIRECT] });
  const res = await par(authorizeParams(client.clientId));
  expect(res.status).toBe(201);
  expect(res.headers['cache-control']).toContain('no-store');
  expect(res.body).toEqual({ request_uri: expect.stringMatching(/^urn:ietf:params:oauth:request_uri:[\w-]{40,}$/), expires_in: 60 });
});

describe('refusals of the PAR endpoint (400 in the RFC 6749 dialect, never a redirect)', () => {
  let clientId: string;
  let clientSecret: string;
  beforeAll(async () => {
    ({ clientId, clientSecret } = (await adminClient()) as { clientId: string; clientSecret: string });
  });
  const authed = (extra: Record<string, string> = {}) => ({ ...authorizeParams(clientId), client_secret: clientSecret, ...extra });

  test.each([
    ['request_uri inside', { request_uri: 'urn:ietf:params:oauth:request_uri:x' }, 'invalid_request'],
    ['an unregistered redirect_uri', { redirect_uri: 'https://evil.example.test/cb' }, 'invalid_request'],
    ['no redirect_uri', { redirect_uri: '' }, 'invalid_request'],
    ['plain PKCE', { code_challenge_method: 'plain' }, 'invalid_request'],
    ['no code_challenge', { code_challenge: '' }, 'invalid_request'],
    ['response_type token', { response_type: 'token' }, 'unsupported_response_type'],
    ['a scope outside the client', { scope: 'openid admin' }, 'invalid_scope'],
    ['an unknown resource', { resource: 'https://nope.example.test/' }, 'invalid_target'],
    ['prompt=bogus', { prompt: 'bogus' }, 'invalid_request'],
  ])('%s', async (_label, extra, error) => {
    const res = await par(authed(extra));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(error);
    expect(res.headers.location).toBeUndefined();
  });

  test('a confidential client without its secret is 401 invalid_client; a wrong secret too', async () => {
    expect((await par(authorizeParams(clientId))).status).toBe(401);
    expect((await par({ ...authorizeParams(clientId), client_secret: 'wrong' })).body.error).toBe('invalid_client');
  });

  test('a client without the code grant is unauthorized_client', async () => {
    const machine = await adminClient({ grant_types: ['client_credentials'], scopes: ['read'] });
    const res = await par({ ...authorizeParams(machine.clientId), client_secret: machine.clientSecret!, redirect_uri: REDIRECT });
    expect(res.status).toBe(400);
  });

  test('malformed bodies are 4xx, never 5xx', async () => {
    const arrays = await request(t.app)
      .post('/api/oauth/par')
      .send({ ...authed(), scope: ['openid', 'profile'] });
    expect(arrays.status).toBe(400);
    const bad = await request(t.app).post('/api/oauth/par').set('content-type', 'application/json').send('{"client_id":');
    expect(bad.status).toBe(400);
    const huge = await par(authed({ state: 'x'.repeat(5000) }));
    expect(huge.status).toBe(400);
  });
});

test('fuzzed pushed requests (any parameter, client authentication and DPoP header) are 2xx or 4xx, never 5xx', async () => {
  const client = await makeAppClient(t, { type: 'public', redirectUris: [REDIRECT] });
  const { clientId, clientSecret } = await adminClient();
  const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
  const value = fc.oneof(
    fc.string({ maxLength: 200 }),
    fc.constantFrom('', 'code', 'S256', 'plain', 'openid', 'none', REDIRECT, 'urn:ietf:params:oauth:request_uri:x', 'A'.repeat(43)),
    fc.jsonValue().map((v) => JSON.stringify(v)),
  );
  const names = fc.constantFrom(
    'response_type',
    'redirect_uri',
    'scope',
    'state',
    'code_challenge',
    'code_challenge_method',
    'nonce',
    'prompt',
    'max_age',
    'login_hint',
    'resource',
    'ui_locales',
    'dpop_jkt',
    'request_uri',
    'client_secret',
    'client_assertion',
    'client_assertion_type',
  );
  const dpop = fc.option(
    fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.tuple(fc.jsonValue(), fc.jsonValue(), fc.string({ maxLength: 20 })).map(([h, p, sig]) => `${b64(h)}.${b64(p)}.${b64(sig)}`),
    ),
    { nil: undefined },
  );
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(client.clientId, clientId, 'unknown-client', ''),
      fc.dictionary(names, value, { maxKeys: 8 }),
      dpop,
      fc.boolean(),
      async (id, extra, proof, withSecret) => {
        const form = { ...authorizeParams(id), ...(withSecret ? { client_secret: clientSecret! } : {}), ...extra };
        const req = request(t.app).post('/api/oauth/par').type('form');
        if (proof !== undefined) req.set('DPoP', proof.replace(/[^\x21-\x7e]/g, '') || 'x');
        const res = await req.send(form);
        expect(res.status).toBeGreaterThanOrEqual(200);
        expect(res.status).toBeLessThan(500);
        if (res.status >= 400) expect(typeof res.body.error).toBe('string');
      },
    ),
    { numRuns: 80 },
  );
});

describe('the request_uri at /api/oauth/authorize', () => {
  test('used once; unknown, expired and another client’s are refused with a 400 page, never a redirect', async () => {
    const client = await makeAppClient(t, { type: 'public', redirectUris: [REDIRECT] });
    const other = await makeAppClient(t, { type: 'public', redirectUris: [REDIRECT] });
    const { agent } = await makeSignedInUser(t);
    const push = async () => (await par(authorizeParams(client.clientId))).body.request_uri as string;
    const authorize = (clientId: string, requestUri: string) =>
      agent.get('/api/oauth/authorize').query({ client_id: clientId, request_uri: requestUri }).set('Accept', 'application/json');

    const uri = await push();
    const first = await authorize(client.clientId, uri);
    expect(first.status).toBe(302);
    expect(new URL(first.headers.location as string).pathname).toBe('/consent');
    const second = await authorize(client.clientId, uri);
    expect(second.status).toBe(400);
    expect(second.headers.location).toBeUndefined();

    expect((await authorize(other.clientId, await push())).status).toBe(400);
    expect((await authorize(client.clientId, 'urn:ietf:params:oauth:request_uri:unknown')).status).toBe(400);
    expect((await authorize(client.clientId, 'https://evil.example.test/req')).status).toBe(400);

    const stale = await push();
    t.clock.advance(61);
    expect((await authorize(client.clientId, stale)).status).toBe(400);

    // Only the pushed parameters count: one sent next to the request_uri is ignored.
    const pushedUri = await push();
    const mixed = await agent.get('/api/oauth/authorize').query({
      client_id: client.clientId,
      request_uri: pushedUri,
      redirect_uri: 'https://evil.example.test/cb',
      scope: 'openid profile email',
    });
    expect(mixed.status).toBe(302);
    const consent = await agent.get(
      `/api/oauth/consent-info?request_id=${new URL(mixed.headers.location as string).searchParams.get('request_id')}`,
    );
    expect(consent.body).toMatchObject({ redirect_uri: REDIRECT, scopes: ['openid'] });
  });

  test('a request_uri that is not a string, or sent twice, is a 400 page', async () => {
    const client = await makeAppClient(t, { type: 'public', redirectUris: [REDIRECT] });
    const res = await request(t.app).get(
      `/api/oauth/authorize?client_id=${client.clientId}&request_uri=urn:ietf:params:oauth:request_uri:a&request_uri=b`,
    );
    expect(res.status).toBe(400);
  });
});

describe('requiring PAR', () => {
  test('per client: a plain authorization request is refused (400, no redirect); the pushed one works', async () => {
    const { clientId, clientSecret } = await adminClient({ require_pushed_authorization_requests: true });
    const shown = await request(t.app).get(`/api/admin/oauth-clients/${clientId}`).set('Authorization', bearer);
    expect(shown.body.client.require_pushed_authorization_requests).toBe(true);
    const { agent } = await makeSignedInUser(t);
    const plain = await agent.get('/api/oauth/authorize').query(authorizeParams(clientId)).set('Accept', 'application/json');
    expect(plain.status).toBe(400);
    expect(plain.body.error_description).toMatch(/par/i);
    const uri = (await par({ ...authorizeParams(clientId), client_secret: clientSecret! })).body.request_uri as string;
    const pushed = await agent.get('/api/oauth/authorize').query({ client_id: clientId, request_uri: uri });
    expect(pushed.status).toBe(302);
  });

  test('globally (the require_pushed_authorization_requests setting): every client, announced in discovery', async () => {
    const client = await makeAppClient(t, { type: 'public', redirectUris: [REDIRECT] });
    const set = await request(t.app)
      .patch('/api/admin/settings')
      .set('Authorization', bearer)
      .send({ require_pushed_authorization_requests: true });
    expect(set.status).toBe(200);
    await t.ctx.settings.refresh();
    try {
      const discovery = await request(t.app).get('/.well-known/openid-configuration');
      expect(discovery.body.require_pushed_authorization_requests).toBe(true);
      const { agent } = await makeSignedInUser(t);
      const plain = await agent.get('/api/oauth/authorize').query(authorizeParams(client.clientId)).set('Accept', 'application/json');
      expect(plain.status).toBe(400);
      const uri = (await par(authorizeParams(client.clientId))).body.request_uri as string;
      expect((await agent.get('/api/oauth/authorize').query({ client_id: client.clientId, request_uri: uri })).status).toBe(302);
    } finally {
      await request(t.app).patch('/api/admin/settings').set('Authorization', bearer).send({ require_pushed_authorization_requests: false });
      await t.ctx.settings.refresh();
    }
  });
});

test('a client registers require_pushed_authorization_requests dynamically and in the console', async () => {
  const env = await createListeningTestApp({ CLIENT_REGISTRATION: 'open' });
  try {
    const res = await request(env.t.app)
      .post('/api/oauth/register')
      .send({ redirect_uris: ['http://127.0.0.1/cb'], token_endpoint_auth_method: 'none', require_pushed_authorization_requests: true });
    expect(res.status).toBe(201);
    expect(res.body.require_pushed_authorization_requests).toBe(true);
  } finally {
    await env.stop();
  }
  const { agent } = await makeSignedInUser(t, ['super_admin']);
  const form = await agent.get('/admin/applications/new?preset=custom');
  const csrf = /name="csrf" value="([^"]+)"/.exec(form.text)![1]!;
  expect(form.text).toContain('name="par"');
  const created = await agent
    .post('/admin/applications')
    .type('form')
    .send({
      csrf,
      name: 'Console PAR',
      type: 'confidential',
      grant_types: ['authorization_code'],
      redirect_uris: REDIRECT,
      post_logout_redirect_uris: '',
      scopes: ['openid'],
      par: 'true',
    });
  expect(created.status).toBe(201);
  const id = /id="client-id">([^<]+)</.exec(created.text)![1]!;
  expect((await t.db('oauth_clients').where({ client_id: id }).first()).require_pushed_authorization_requests).toBe(true);
});

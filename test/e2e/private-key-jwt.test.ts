import fc from 'fast-check';
import path from 'node:path';
import * as jose from 'jose';
import request from 'supertest';
import { createClientKeysFetcher, JWKS_MAX_BYTES, JWKS_TIMEOUT_MS } from '../../src/services/oauth/client-keys';
import { webhookOutboundPolicy } from '../../src/services/webhooks/webhook-policy';
import { answerOnDevicePage, makeApiResource } from '../helpers/apps';
import { makeClientKey, signAssertion, startJwksHost, type ClientKeyPair } from '../helpers/client-keys';
import { dpopProof } from '../helpers/dpop';
import { makeSignedInUser, makeUser, signIn } from '../helpers/factories';
import { createListeningTestApp, loadOAuth4WebApi, obtainCode } from '../helpers/oauth';
import { loadEsm, type OpenIdClient } from '../helpers/oidc';
import type { TestApp } from '../helpers/test-app';

/**
 * Issue 34, private_key_jwt (RFC 7523, OIDC Core §9): confidential clients that prove themselves with an assertion
 * signed by a key of their `jwks` or `jwks_uri`, at every endpoint that authenticates clients, driven by openid-client
 * and oauth4webapi (libraries nobody here wrote) and by hand for every refusal.
 */
const oidc = loadEsm<OpenIdClient>('openid-client');
const oauth = loadOAuth4WebApi();
type Machine = {
  serviceToken(o: {
    issuer: string;
    clientId: string;
    privateKey?: unknown;
    resource?: string;
    scope?: string;
    insecure: boolean;
  }): Promise<{ access_token: string; token_type: string }>;
};
const machine = loadEsm<Machine>(path.join(__dirname, '../../examples/apps/machine.mjs'));

let t: TestApp;
let baseUrl: string;
let stop: () => Promise<void>;
let bearer: string;
let audience: string;

beforeAll(async () => {
  ({ t, baseUrl, stop } = await createListeningTestApp({ CLIENT_REGISTRATION: 'token' }));
  ({ bearer } = await makeSignedInUser(t, ['admin']));
  audience = (await makeApiResource(t, { scopes: ['reports:read'] })).identifier;
});
afterAll(async () => {
  await stop?.();
});

const admin = () => request(t.app);

/** An admin registers a machine client for private_key_jwt with `keys` (jwks or jwks_uri). */
async function registerClient(keys: { jwks?: unknown; jwks_uri?: string }, extra: Record<string, unknown> = {}) {
  const res = await admin()
    .post('/api/admin/oauth-clients')
    .set('Authorization', bearer)
    .send({
      name: 'Reports exporter',
      token_endpoint_auth_method: 'private_key_jwt',
      grant_types: ['client_credentials'],
      scopes: ['read'],
      allowed_resources: [audience],
      ...keys,
      ...extra,
    });
  expect(res.status).toBe(201);
  return res.body as { client: Record<string, unknown> & { client_id: string }; client_secret?: string };
}

const tokenRequest = (form: Record<string, string>) =>
  request(t.app)
    .post('/api/oauth/token')
    .type('form')
    .send({ grant_type: 'client_credentials', ...form });

const assertionForm = (assertion: string) => ({
  client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
  client_assertion: assertion,
});

async function lastFailure(clientId?: string) {
  const row = await t
    .db('audit_events')
    .where({ type: 'oauth.client.auth_failed', ...(clientId ? { client_id: clientId } : {}) })
    .orderBy('id', 'desc')
    .first();
  return (typeof row?.detail === 'string' ? JSON.parse(row.detail) : row?.detail) as { reason: string; endpoint: string };
}

describe('registration by an admin', () => {
  test('a private_key_jwt client gets no secret; the admin API shows its method and keys', async () => {
    const key = await makeClientKey();
    const created = await registerClient({ jwks: { keys: [key.publicJwk] } });
    expect(created.client_secret).toBeUndefined();
    expect(created.client).toMatchObject({
      type: 'confidential',
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [expect.objectContaining({ kid: key.kid, kty: 'EC' })] },
      jwks_uri: null,
    });
    const rotate = await admin().post(`/api/admin/oauth-clients/${created.client.client_id}/rotate-secret`).set('Authorization', bearer);
    expect(rotate.status).toBe(400);
  });

  test.each([
    ['both jwks and jwks_uri', async (k: ClientKeyPair) => ({ jwks: { keys: [k.publicJwk] }, jwks_uri: 'https://keys.example.test/jwks' })],
    ['neither', async () => ({})],
    ['a private key in jwks', async (k: ClientKeyPair) => ({ jwks: { keys: [{ ...k.publicJwk, d: 'AAAA' }] } })],
    ['a symmetric key', async () => ({ jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0' }] } })],
    ['a key that is not one', async () => ({ jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'AA', y: 'BB' }] } })],
    ['jwks that is not a set', async () => ({ jwks: 'keys' })],
    ['a plain-http jwks_uri off loopback', async () => ({ jwks_uri: 'http://keys.example.test/jwks' })],
    ['a jwks_uri that is not a URL', async () => ({ jwks_uri: 'keys' })],
  ])('refused with 400: %s', async (_label, make) => {
    const res = await admin()
      .post('/api/admin/oauth-clients')
      .set('Authorization', bearer)
      .send({
        name: 'x',
        token_endpoint_auth_method: 'private_key_jwt',
        grant_types: ['client_credentials'],
        scopes: ['read'],
        ...(await make(await makeClientKey())),
      });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
  });

  test('keys on a client of another method, and private_key_jwt on a public client, are refused', async () => {
    const key = await makeClientKey();
    const keysOnSecret = await admin()
      .post('/api/admin/oauth-clients')
      .set('Authorization', bearer)
      .send({ name: 'x', grant_types: ['client_credentials'], scopes: ['read'], jwks: { keys: [key.publicJwk] } });
    expect(keysOnSecret.status).toBe(400);
    const publicJwt = await admin()
      .post('/api/admin/oauth-clients')
      .set('Authorization', bearer)
      .send({ name: 'x', type: 'public', token_endpoint_auth_method: 'private_key_jwt', redirect_uris: ['https://a.test/cb'] });
    expect(publicJwt.status).toBe(400);
  });

  test('the keys can be replaced: the old key stops working, the new one works', async () => {
    const oldKey = await makeClientKey();
    const newKey = await makeClientKey();
    const { client } = await registerClient({ jwks: { keys: [oldKey.publicJwk] } });
    const updated = await admin()
      .put(`/api/admin/oauth-clients/${client.client_id}`)
      .set('Authorization', bearer)
      .send({ jwks: { keys: [newKey.publicJwk] } });
    expect(updated.status).toBe(200);
    const aud = baseUrl;
    const refused = await tokenRequest(assertionForm(await signAssertion(oldKey, { iss: client.client_id, sub: client.client_id, aud })));
    expect(refused.status).toBe(401);
    const accepted = await tokenRequest(assertionForm(await signAssertion(newKey, { iss: client.client_id, sub: client.client_id, aud })));
    expect(accepted.status).toBe(200);
  });
});

describe('with openid-client and oauth4webapi', () => {
  test('openid-client (the machine-to-machine guide): client_credentials, then introspection and revocation, all by assertion', async () => {
    const key = await makeClientKey('ES256');
    const { client } = await registerClient({ jwks: { keys: [key.publicJwk] } });
    const tokens = await machine.serviceToken({
      issuer: baseUrl,
      clientId: client.client_id,
      privateKey: { key: key.privateKey, kid: key.kid },
      resource: audience,
      scope: 'reports:read',
      insecure: true,
    });
    expect(tokens.token_type.toLowerCase()).toBe('bearer');

    const config = await oidc.discovery(new URL(baseUrl), client.client_id, undefined, oidc.PrivateKeyJwt(key.privateKey), {
      execute: [oidc.allowInsecureRequests],
    });
    const introspected = await oidc.tokenIntrospection(config, tokens.access_token);
    expect(introspected).toMatchObject({ active: true, client_id: client.client_id, aud: audience });
    await oidc.tokenRevocation(config, tokens.access_token);
    const failures = await t.db('audit_events').where({ type: 'oauth.client.auth_failed', client_id: client.client_id });
    expect(failures).toHaveLength(0);
  });

  test.each(['RS256', 'PS256', 'EdDSA'] as const)('oauth4webapi: client_credentials with a %s key', async (alg) => {
    const key = await makeClientKey(alg);
    const { client } = await registerClient({ jwks: { keys: [key.publicJwk] } });
    const options = { [oauth.allowInsecureRequests]: true };
    const as = await oauth.processDiscoveryResponse(new URL(baseUrl), await oauth.discoveryRequest(new URL(baseUrl), options));
    const auth = oauth.PrivateKeyJwt({ key: key.privateKey, kid: key.kid });
    const response = await oauth.clientCredentialsGrantRequest(
      as,
      { client_id: client.client_id },
      auth,
      new URLSearchParams({ scope: 'read' }),
      options,
    );
    const result = await oauth.processClientCredentialsResponse(as, { client_id: client.client_id }, response);
    expect(typeof result.access_token).toBe('string');
  });

  test('oauth4webapi: device authorization by assertion', async () => {
    const key = await makeClientKey();
    const { client } = await registerClient(
      { jwks: { keys: [key.publicJwk] } },
      { grant_types: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'], scopes: ['openid', 'profile'] },
    );
    const options = { [oauth.allowInsecureRequests]: true };
    const as = await oauth.processDiscoveryResponse(new URL(baseUrl), await oauth.discoveryRequest(new URL(baseUrl), options));
    const response = await oauth.deviceAuthorizationRequest(
      as,
      { client_id: client.client_id },
      oauth.PrivateKeyJwt({ key: key.privateKey, kid: key.kid }),
      new URLSearchParams({ scope: 'openid' }),
      options,
    );
    const answer = await oauth.processDeviceAuthorizationResponse(as, { client_id: client.client_id }, response);
    expect(answer.user_code).toMatch(/^[A-Z]{4}-[A-Z]{4}$/);
  });
});

describe('every refusal is 401 invalid_client, audited with its reason', () => {
  let key: ClientKeyPair;
  let clientId: string;
  beforeAll(async () => {
    key = await makeClientKey();
    clientId = (await registerClient({ jwks: { keys: [key.publicJwk] } })).client.client_id;
  });
  const now = () => Math.floor(Date.now() / 1000);
  const good = () => ({ iss: clientId, sub: clientId, aud: baseUrl });

  test('the token endpoint URL is an accepted audience too', async () => {
    const res = await tokenRequest(assertionForm(await signAssertion(key, { ...good(), aud: `${baseUrl}/api/oauth/token` })));
    expect(res.status).toBe(200);
  });

  test('aud may be an array: one accepted audience among others is enough', async () => {
    const res = await tokenRequest(
      assertionForm(await signAssertion(key, { ...good(), aud: ['https://elsewhere.example.test', `${baseUrl}/api/oauth/token`] })),
    );
    expect(res.status).toBe(200);
  });

  test.each([
    ['another audience', async () => signAssertion(key, { ...good(), aud: 'https://elsewhere.example.test' }), 'invalid_assertion'],
    ['sub other than iss', async () => signAssertion(key, { ...good(), sub: 'someone-else' }), 'invalid_assertion'],
    ['expired', async () => signAssertion(key, { ...good(), iat: now() - 600, exp: now() - 120 }), 'invalid_assertion'],
    ['valid for longer than 5 minutes', async () => signAssertion(key, { ...good(), exp: now() + 900 }), 'invalid_assertion'],
    ['without jti', async () => signAssertion(key, { ...good(), jti: undefined }), 'invalid_assertion'],
    ['signed by another key', async () => signAssertion(await makeClientKey('ES256', key.kid), good()), 'invalid_assertion'],
    ['signed with HS256', async () => signHs256({ ...good() }), 'invalid_assertion'],
    ['not valid yet (nbf two minutes ahead)', async () => signAssertion(key, { ...good(), nbf: now() + 120 }), 'invalid_assertion'],
    ['iat that is not a number', async () => signAssertion(key, { ...good(), iat: 'yesterday' }), 'invalid_assertion'],
    ['exp that is not a number', async () => signAssertion(key, { ...good(), exp: String(now() + 60) }), 'invalid_assertion'],
    [
      'an audience array naming none of ours',
      async () => signAssertion(key, { ...good(), aud: ['https://elsewhere.example.test', 'x'] }),
      'invalid_assertion',
    ],
    [
      'a crit header (an extension this server does not understand)',
      async () =>
        new jose.SignJWT({ ...good(), exp: now() + 60, jti: crypto.randomUUID() })
          .setProtectedHeader({ alg: key.alg, kid: key.kid, crit: ['urn:example:ext'], 'urn:example:ext': 1 })
          .sign(key.privateKey, { crit: { 'urn:example:ext': true } }),
      'invalid_assertion',
    ],
    // Not even read as a JWT naming a client: refused before any client is looked up.
    ['alg none', async () => unsigned({ ...good(), exp: now() + 60, jti: 'x' }), 'malformed'],
  ])('%s', async (_label, make, reason) => {
    const res = await tokenRequest(assertionForm(await make()));
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
    expect((await lastFailure(reason === 'malformed' ? undefined : clientId)).reason).toBe(reason);
  });

  test('a jti is accepted once: the replay is refused (and so is a concurrent burst but one)', async () => {
    const assertion = await signAssertion(key, good());
    expect((await tokenRequest(assertionForm(assertion))).status).toBe(200);
    const replay = await tokenRequest(assertionForm(assertion));
    expect(replay.status).toBe(401);
    expect((await lastFailure(clientId)).reason).toBe('assertion_replayed');

    const burst = await signAssertion(key, good());
    const answers = await Promise.all(Array.from({ length: 5 }, () => tokenRequest(assertionForm(burst))));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 401, 401, 401, 401]);
  });

  test('a DPoP nonce challenge spends nothing: the same assertion works on the retry, and is refused on a third use', async () => {
    const { bearer: superAdmin } = await makeSignedInUser(t, ['super_admin']);
    const setting = (on: boolean) =>
      admin().patch('/api/admin/settings').set('Authorization', superAdmin).send({ dpop_nonce_required: on });
    expect((await setting(true)).status).toBe(200);
    await t.ctx.settings.refresh();
    try {
      const proofKey = await makeClientKey('ES256');
      const htu = `${t.ctx.config.baseUrl}/api/oauth/token`;
      const assertion = await signAssertion(key, good());
      const withProof = (proof: string) => tokenRequest(assertionForm(assertion)).set('DPoP', proof);
      const challenged = await withProof(await dpopProof(proofKey, { htu }));
      expect(challenged.status).toBe(400);
      expect(challenged.body.error).toBe('use_dpop_nonce');
      const nonce = challenged.headers['dpop-nonce'] as string;
      expect(nonce).toBeTruthy();
      const retried = await withProof(await dpopProof(proofKey, { htu, nonce }));
      expect(retried.status).toBe(200);
      expect(retried.body.token_type).toBe('DPoP');
      const third = await withProof(await dpopProof(proofKey, { htu, nonce }));
      expect(third.status).toBe(401);
      expect(third.body.error).toBe('invalid_client');
      expect((await lastFailure(clientId)).reason).toBe('assertion_replayed');
    } finally {
      await setting(false);
      await t.ctx.settings.refresh();
    }
  });

  test('a client that requires DPoP and sends no proof is refused without spending its assertion', async () => {
    const dpopClientId = (await registerClient({ jwks: { keys: [key.publicJwk] } }, { dpop_bound_access_tokens: true })).client.client_id;
    const assertion = await signAssertion(key, { iss: dpopClientId, sub: dpopClientId, aud: baseUrl });
    const refused = await tokenRequest(assertionForm(assertion));
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_dpop_proof');
    // Unspent: the same assertion, now with a proof, is accepted once, then it is a replay.
    const proofKey = await makeClientKey('ES256');
    const htu = `${t.ctx.config.baseUrl}/api/oauth/token`;
    const withProof = await tokenRequest(assertionForm(assertion)).set('DPoP', await dpopProof(proofKey, { htu }));
    expect(withProof.status).toBe(200);
    expect(withProof.body.token_type).toBe('DPoP');
    const replay = await tokenRequest(assertionForm(assertion)).set('DPoP', await dpopProof(proofKey, { htu }));
    expect(replay.status).toBe(401);
    expect((await lastFailure(dpopClientId)).reason).toBe('assertion_replayed');
  });

  test('an API that requires DPoP, asked for without a proof, is refused without spending the assertion (named, or the only allowed API)', async () => {
    const api = (
      await admin()
        .post('/api/admin/api-resources')
        .set('Authorization', bearer)
        .send({
          identifier: `https://bound-${Date.now()}.pkjwt.test/`,
          name: 'Bound',
          scopes: ['ledger:read'],
          dpop_bound_access_tokens: true,
        })
    ).body.resource.identifier as string;
    const proofKey = await makeClientKey('ES256');
    const htu = `${t.ctx.config.baseUrl}/api/oauth/token`;
    for (const named of [true, false]) {
      const clientId = (await registerClient({ jwks: { keys: [key.publicJwk] } }, { allowed_resources: [api] })).client.client_id;
      const assertion = await signAssertion(key, { iss: clientId, sub: clientId, aud: baseUrl });
      const form = { ...assertionForm(assertion), ...(named ? { resource: api } : {}) };
      const refused = await tokenRequest(form);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe('invalid_dpop_proof');
      expect(refused.body.error_description).toContain(api);
      // Unspent: the same assertion with a proof gets the token, once.
      const retried = await tokenRequest(form).set('DPoP', await dpopProof(proofKey, { htu }));
      expect(retried.status).toBe(200);
      expect(retried.body.token_type).toBe('DPoP');
      const replay = await tokenRequest(form).set('DPoP', await dpopProof(proofKey, { htu }));
      expect(replay.status).toBe(401);
      expect((await lastFailure(clientId)).reason).toBe('assertion_replayed');
    }
  });

  test('a code bound to a DPoP key, or for an API that requires DPoP, exchanged without a proof spends neither the assertion nor the code', async () => {
    const api = (
      await admin()
        .post('/api/admin/api-resources')
        .set('Authorization', bearer)
        .send({
          identifier: `https://bound-code-${Date.now()}.pkjwt.test/`,
          name: 'Bound',
          scopes: ['ledger:read'],
          dpop_bound_access_tokens: true,
        })
    ).body.resource.identifier as string;
    const web = await admin()
      .post('/api/admin/oauth-clients')
      .set('Authorization', bearer)
      .send({
        name: 'Ledger web',
        token_endpoint_auth_method: 'private_key_jwt',
        grant_types: ['authorization_code', 'refresh_token'],
        redirect_uris: ['https://ledger.test/callback'],
        scopes: ['openid'],
        allowed_resources: [api],
        jwks: { keys: [key.publicJwk] },
      });
    expect(web.status).toBe(201);
    const clientId = web.body.client.client_id as string;
    const client = { clientId, redirectUris: ['https://ledger.test/callback'] };
    const { agent } = await signIn(t, await makeUser(t));
    const proofKey = await makeClientKey('ES256');
    const htu = `${t.ctx.config.baseUrl}/api/oauth/token`;
    const cases: Array<Record<string, string>> = [
      { scope: 'openid ledger:read', resource: api },
      { scope: 'openid', dpop_jkt: await jose.calculateJwkThumbprint(proofKey.publicJwk as jose.JWK) },
    ];
    for (const overrides of cases) {
      const { code, verifier, redirectUri } = await obtainCode(agent, client, overrides);
      const assertion = await signAssertion(key, { iss: clientId, sub: clientId, aud: baseUrl });
      const form = {
        ...assertionForm(assertion),
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        redirect_uri: redirectUri,
      };
      const refused = await tokenRequest(form);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe('invalid_dpop_proof');
      const retried = await tokenRequest(form).set('DPoP', await dpopProof(proofKey, { htu }));
      expect(retried.status).toBe(200);
      expect(retried.body.token_type).toBe('DPoP');
    }
  });

  test('an approved device authorization for an API that requires DPoP, polled without a proof, spends no assertion', async () => {
    const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
    const api = (
      await admin()
        .post('/api/admin/api-resources')
        .set('Authorization', bearer)
        .send({
          identifier: `https://bound-device-${Date.now()}.pkjwt.test/`,
          name: 'Bound',
          scopes: ['ledger:read'],
          dpop_bound_access_tokens: true,
        })
    ).body.resource.identifier as string;
    const clientId = (
      await registerClient(
        { jwks: { keys: [key.publicJwk] } },
        { grant_types: [DEVICE_GRANT], scopes: ['openid'], allowed_resources: [api] },
      )
    ).client.client_id;
    const assertionOf = async () => assertionForm(await signAssertion(key, { iss: clientId, sub: clientId, aud: baseUrl }));
    const started = await request(t.app)
      .post('/api/oauth/device_authorization')
      .type('form')
      .send({ ...(await assertionOf()), scope: 'openid ledger:read', resource: api });
    expect(started.status).toBe(200);
    const { agent } = await signIn(t, await makeUser(t));
    expect((await answerOnDevicePage(agent, started.body.user_code, 'approve')).status).toBe(200);
    const form = { ...(await assertionOf()), grant_type: DEVICE_GRANT, device_code: started.body.device_code as string };
    const refused = await tokenRequest(form);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_dpop_proof');
    const proofKey = await makeClientKey('ES256');
    const retried = await tokenRequest(form).set('DPoP', await dpopProof(proofKey, { htu: `${t.ctx.config.baseUrl}/api/oauth/token` }));
    expect(retried.status).toBe(200);
    expect(retried.body.token_type).toBe('DPoP');
  });

  test('malformed assertions and parameters are 4xx, never 5xx', async () => {
    for (const assertion of ['abc', 'a.b.c', '', 'eyJhbGciOiJFUzI1NiJ9.bm90IGpzb24.c2ln', 'x'.repeat(20_000)]) {
      const res = await tokenRequest(assertionForm(assertion));
      expect([400, 401]).toContain(res.status);
    }
    const wrongType = await tokenRequest({ client_assertion_type: 'urn:other', client_assertion: await signAssertion(key, good()) });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error).toBe('invalid_request');
    const arrays = await request(t.app)
      .post('/api/oauth/token')
      .send({ grant_type: 'client_credentials', client_assertion: ['a', 'b'], client_assertion_type: ['x'] });
    expect(arrays.status).toBe(400);
  });

  test('fuzzed assertions (random text, JWT-shaped JSON, wrong claims and headers) are 400 or 401 (or 200 when valid by chance), never 5xx', async () => {
    const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
    const claim = fc.oneof(fc.jsonValue(), fc.constantFrom(clientId, baseUrl, `${baseUrl}/api/oauth/token`, now(), now() + 60));
    const shapes = fc.oneof(
      fc.string({ maxLength: 300 }),
      fc.tuple(fc.jsonValue(), fc.jsonValue(), fc.string({ maxLength: 40 })).map(([h, p, sig]) => `${b64(h)}.${b64(p)}.${b64(sig)}`),
      // Well-formed JWTs signed by the client's key whose claims and header are arbitrary.
      fc
        .record({ iss: claim, sub: claim, aud: claim, exp: claim, jti: claim, iat: claim, nbf: claim }, { requiredKeys: [] })
        .chain((claims) =>
          fc
            .record(
              { kid: fc.oneof(fc.constant(key.kid), fc.jsonValue()), typ: fc.oneof(fc.constant('JWT'), fc.jsonValue()) },
              { requiredKeys: [] },
            )
            .map((header) => ({ claims, header })),
        )
        .map(({ claims, header }) => ({ claims: JSON.parse(JSON.stringify(claims)) as Record<string, unknown>, header })),
    );
    await fc.assert(
      fc.asyncProperty(shapes, fc.constantFrom(undefined, clientId, 'other'), async (shape, id) => {
        const assertion =
          typeof shape === 'string'
            ? shape
            : await new jose.SignJWT(shape.claims)
                .setProtectedHeader(JSON.parse(JSON.stringify({ ...shape.header, alg: key.alg })) as jose.JWTHeaderParameters)
                .sign(key.privateKey);
        const res = await tokenRequest({ ...assertionForm(assertion), ...(id ? { client_id: id } : {}) });
        // A generated assertion may happen to be valid (iss = sub = client_id, a good aud and exp, a string jti): 200.
        expect([200, 400, 401]).toContain(res.status);
        if (res.status !== 200) expect(['invalid_client', 'invalid_request']).toContain(res.body.error);
      }),
      { numRuns: 80 },
    );
  });

  test('an assertion and a secret together are invalid_request; client_id must match the assertion', async () => {
    const both = await tokenRequest({ ...assertionForm(await signAssertion(key, good())), client_secret: 'x' });
    expect(both.status).toBe(400);
    expect(both.body.error).toBe('invalid_request');
    const mismatch = await tokenRequest({ ...assertionForm(await signAssertion(key, good())), client_id: 'another-client' });
    expect(mismatch.status).toBe(401);
    const matching = await tokenRequest({ ...assertionForm(await signAssertion(key, good())), client_id: clientId });
    expect(matching.status).toBe(200);
  });

  test('a private_key_jwt client cannot use a secret, and a secret client cannot use an assertion', async () => {
    const withSecret = await tokenRequest({ client_id: clientId, client_secret: 'guess' });
    expect(withSecret.status).toBe(401);
    expect((await lastFailure(clientId)).reason).toBe('wrong_method');

    const secretClient = await admin()
      .post('/api/admin/oauth-clients')
      .set('Authorization', bearer)
      .send({ name: 'secret', grant_types: ['client_credentials'], scopes: ['read'] });
    const other = secretClient.body.client.client_id as string;
    const res = await tokenRequest(assertionForm(await signAssertion(key, { iss: other, sub: other, aud: baseUrl })));
    expect(res.status).toBe(401);
    expect((await lastFailure(other)).reason).toBe('wrong_method');
  });

  test('an unknown client and a deactivated one are refused', async () => {
    const unknown = await tokenRequest(assertionForm(await signAssertion(key, { iss: 'nobody', sub: 'nobody', aud: baseUrl })));
    expect(unknown.status).toBe(401);
    const k = await makeClientKey();
    const { client } = await registerClient({ jwks: { keys: [k.publicJwk] } });
    await admin().put(`/api/admin/oauth-clients/${client.client_id}`).set('Authorization', bearer).send({ is_active: false });
    const inactive = await tokenRequest(
      assertionForm(await signAssertion(k, { iss: client.client_id, sub: client.client_id, aud: baseUrl })),
    );
    expect(inactive.status).toBe(401);
  });

  test('revocation and introspection refuse a bad assertion the same way', async () => {
    for (const endpoint of ['/api/oauth/revoke', '/api/oauth/introspect']) {
      const res = await request(t.app)
        .post(endpoint)
        .type('form')
        .send({ token: 'x', ...assertionForm(await signAssertion(key, { ...good(), aud: 'https://elsewhere.example.test' })) });
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_client');
    }
  });
});

describe('jwks_uri', () => {
  test('fetched once and cached; a new kid after a rotation makes it fetch again (at most once per cool-down)', async () => {
    const first = await makeClientKey();
    const host = await startJwksHost([first.publicJwk]);
    try {
      const { client } = await registerClient({ jwks_uri: host.url });
      const id = client.client_id;
      const claims = { iss: id, sub: id, aud: baseUrl };
      expect((await tokenRequest(assertionForm(await signAssertion(first, claims)))).status).toBe(200);
      expect((await tokenRequest(assertionForm(await signAssertion(first, claims)))).status).toBe(200);
      expect(host.state.hits).toBe(1);

      const second = await makeClientKey();
      host.state.keys = [first.publicJwk, second.publicJwk];
      // Within the cool-down an unknown kid does not fetch again.
      expect((await tokenRequest(assertionForm(await signAssertion(second, claims)))).status).toBe(401);
      expect(host.state.hits).toBe(1);
      t.clock.advance(11);
      expect((await tokenRequest(assertionForm(await signAssertion(second, claims)))).status).toBe(200);
      expect(host.state.hits).toBe(2);
    } finally {
      await host.close();
    }
  });

  test('a key set that cannot be fetched is invalid_client, audited as keys_unavailable', async () => {
    const key = await makeClientKey();
    const host = await startJwksHost([key.publicJwk]);
    const url = host.url;
    await host.close();
    const { client } = await registerClient({ jwks_uri: url });
    const res = await tokenRequest(assertionForm(await signAssertion(key, { iss: client.client_id, sub: client.client_id, aud: baseUrl })));
    expect(res.status).toBe(401);
    expect((await lastFailure(client.client_id)).reason).toBe('keys_unavailable');
  });

  test('a jwks_uri that fails is not fetched again within the cool-down, however many assertions name the client', async () => {
    const key = await makeClientKey();
    const host = await startJwksHost([key.publicJwk]);
    try {
      host.state.status = 500;
      const { client } = await registerClient({ jwks_uri: host.url });
      const id = client.client_id;
      const claims = { iss: id, sub: id, aud: baseUrl };
      for (let i = 0; i < 3; i++) {
        const res = await tokenRequest(assertionForm(await signAssertion(key, claims)));
        expect(res.status).toBe(401);
        expect(res.body.error).toBe('invalid_client');
        expect((await lastFailure(id)).reason).toBe('keys_unavailable');
      }
      expect(host.state.hits).toBe(1);
      // The host recovers: after the cool-down the set is fetched again and the client signs in.
      host.state.status = 200;
      t.clock.advance(11);
      expect((await tokenRequest(assertionForm(await signAssertion(key, claims)))).status).toBe(200);
      expect(host.state.hits).toBe(2);
    } finally {
      await host.close();
    }
  });

  test("under production's address rules a jwks_uri on a loopback address is never fetched", async () => {
    const key = await makeClientKey();
    const host = await startJwksHost([key.publicJwk]);
    const strict = await createListeningTestApp(
      {},
      {
        clientKeys: (_config, clock) =>
          createClientKeysFetcher({
            clock,
            policyFor: (uri) =>
              webhookOutboundPolicy({ isProduction: true, webhookAllowPrivate: false }, uri, {
                allowHttp: true,
                timeoutMs: JWKS_TIMEOUT_MS,
                maxBytes: JWKS_MAX_BYTES,
              }),
          }),
      },
    );
    try {
      const { bearer: strictAdmin } = await makeSignedInUser(strict.t, ['admin']);
      const created = await request(strict.t.app)
        .post('/api/admin/oauth-clients')
        .set('Authorization', strictAdmin)
        .send({
          name: 'x',
          token_endpoint_auth_method: 'private_key_jwt',
          grant_types: ['client_credentials'],
          scopes: ['read'],
          jwks_uri: host.url,
        });
      const id = created.body.client.client_id as string;
      const res = await request(strict.t.app)
        .post('/api/oauth/token')
        .type('form')
        .send({ grant_type: 'client_credentials', ...assertionForm(await signAssertion(key, { iss: id, sub: id, aud: strict.baseUrl })) });
      expect(res.status).toBe(401);
      expect(host.state.hits).toBe(0);
    } finally {
      await strict.stop();
      await host.close();
    }
  });
});

describe('dynamic registration (RFC 7591)', () => {
  test('a client registers private_key_jwt with jwks_uri, gets no secret, and authenticates with openid-client', async () => {
    const key = await makeClientKey();
    const host = await startJwksHost([key.publicJwk]);
    try {
      const token = await admin().post('/api/admin/registration-tokens').set('Authorization', bearer).send({});
      const registered = await request(t.app)
        .post('/api/oauth/register')
        .set('Authorization', `Bearer ${token.body.token}`)
        .send({
          client_name: 'Self-registered exporter',
          grant_types: ['client_credentials'],
          token_endpoint_auth_method: 'private_key_jwt',
          jwks_uri: host.url,
          scope: 'read',
        });
      expect(registered.status).toBe(201);
      expect(registered.body).toMatchObject({ token_endpoint_auth_method: 'private_key_jwt', jwks_uri: host.url });
      expect(registered.body.client_secret).toBeUndefined();
      const config = await oidc.discovery(new URL(baseUrl), registered.body.client_id, undefined, oidc.PrivateKeyJwt(key.privateKey), {
        execute: [oidc.allowInsecureRequests],
      });
      const tokens = await oidc.clientCredentialsGrant(config, { scope: 'read' });
      expect(typeof tokens.access_token).toBe('string');
    } finally {
      await host.close();
    }
  });

  test.each([
    ['without keys', {}],
    ['with a private key', { jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'a', y: 'b', d: 'c' }] } }],
    ['keys without private_key_jwt', { token_endpoint_auth_method: 'client_secret_basic', jwks_uri: 'https://k.example.test/jwks' }],
  ])('refused as invalid_client_metadata: %s', async (_label, extra) => {
    const token = await admin().post('/api/admin/registration-tokens').set('Authorization', bearer).send({});
    const res = await request(t.app)
      .post('/api/oauth/register')
      .set('Authorization', `Bearer ${token.body.token}`)
      .send({ grant_types: ['client_credentials'], token_endpoint_auth_method: 'private_key_jwt', scope: 'read', ...extra });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_client_metadata');
  });
});

test('discovery lists private_key_jwt and its algorithms for every endpoint that authenticates clients', async () => {
  for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
    const res = await request(t.app).get(path);
    expect(res.body.token_endpoint_auth_methods_supported).toContain('private_key_jwt');
    expect(res.body.token_endpoint_auth_signing_alg_values_supported).toEqual(['RS256', 'PS256', 'ES256', 'EdDSA', 'Ed25519']);
    expect(res.body.revocation_endpoint_auth_methods_supported).toContain('private_key_jwt');
    expect(res.body.introspection_endpoint_auth_methods_supported).toContain('private_key_jwt');
  }
});

async function signHs256(claims: Record<string, unknown>): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new jose.SignJWT({ iat: now, exp: now + 60, jti: crypto.randomUUID(), ...claims })
    .setProtectedHeader({ alg: 'HS256' })
    .sign(new TextEncoder().encode('a-shared-secret-of-sufficient-length!!'));
}

function unsigned(claims: Record<string, unknown>): string {
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  return `${b64({ alg: 'none' })}.${b64(claims)}.`;
}

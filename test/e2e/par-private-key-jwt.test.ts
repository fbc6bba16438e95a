import { createHash } from 'node:crypto';
import request from 'supertest';
import { makeClientKey, signAssertion, type ClientKeyPair } from '../helpers/client-keys';
import { dpopProof, thumbprintOf } from '../helpers/dpop';
import { makeSignedInUser } from '../helpers/factories';
import { createListeningTestApp, pkcePair } from '../helpers/oauth';
import type { TestApp } from '../helpers/test-app';

/**
 * Pushed authorization requests by a private_key_jwt client (docs/par.md): a refusal of the pushed parameters spends
 * nothing, so it comes before the assertion's jti is spent; the client repeats the corrected request with the same
 * assertion, which is then accepted once.
 */
let t: TestApp;
let baseUrl: string;
let stop: () => Promise<void>;
let bearer: string;
let key: ClientKeyPair;
let clientId: string;
let forbiddenApi: string;

const REDIRECT = 'https://rp.example.test/callback';
const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

beforeAll(async () => {
  ({ t, baseUrl, stop } = await createListeningTestApp());
  ({ bearer } = await makeSignedInUser(t, ['super_admin']));
  key = await makeClientKey();
  const created = await request(t.app)
    .post('/api/admin/oauth-clients')
    .set('Authorization', bearer)
    .send({
      name: 'PAR by assertion',
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [key.publicJwk] },
      redirect_uris: [REDIRECT],
      scopes: ['openid', 'profile'],
    });
  expect(created.status).toBe(201);
  clientId = created.body.client.client_id as string;
  const api = await request(t.app)
    .post('/api/admin/api-resources')
    .set('Authorization', bearer)
    .send({ identifier: `https://forbidden-${Date.now()}.par.test/`, name: 'Not this client’s', scopes: ['ledger:read'] });
  expect(api.status).toBe(201);
  forbiddenApi = api.body.resource.identifier as string;
});
afterAll(async () => {
  await stop?.();
});

function authorizeParams(extra: Record<string, string> = {}) {
  const params: Record<string, string> = {
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid',
    state: 'st',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    ...extra,
  };
  // An empty value stands for a parameter left out.
  return Object.fromEntries(Object.entries(params).filter(([, value]) => value !== ''));
}

const par = (assertion: string, params: Record<string, string>) =>
  request(t.app)
    .post('/api/oauth/par')
    .type('form')
    .send({ client_id: clientId, client_assertion_type: ASSERTION_TYPE, client_assertion: assertion, ...params });

const pushedCount = async () => Number((await t.db('oauth_pushed_requests').where({ client_id: clientId }).count({ n: '*' }))[0].n);

async function lastFailure() {
  const row = await t.db('audit_events').where({ type: 'oauth.client.auth_failed', client_id: clientId }).orderBy('id', 'desc').first();
  return (typeof row?.detail === 'string' ? JSON.parse(row.detail) : row?.detail) as { reason: string; endpoint: string };
}

describe('a refused pushed request leaves the private_key_jwt assertion unspent', () => {
  test.each([
    ['an unregistered redirect_uri', { redirect_uri: 'https://evil.example.test/cb' }, 'invalid_request'],
    ['no redirect_uri', { redirect_uri: '' }, 'invalid_request'],
    ['response_type token', { response_type: 'token' }, 'unsupported_response_type'],
    ['no code_challenge (PKCE)', { code_challenge: '' }, 'invalid_request'],
    ['plain PKCE', { code_challenge_method: 'plain' }, 'invalid_request'],
    ['a scope outside the client', { scope: 'openid admin' }, 'invalid_scope'],
    ['an unknown resource', { resource: 'https://nope.example.test/' }, 'invalid_target'],
    ['a resource the client may not ask for', { resource: '<forbidden>' }, 'invalid_target'],
    ['request_uri inside', { request_uri: 'urn:ietf:params:oauth:request_uri:x' }, 'invalid_request'],
    ['prompt=bogus', { prompt: 'bogus' }, 'invalid_request'],
  ])('%s: the 400 first, then the corrected request with the same assertion, then the replay refused', async (_label, extra, error) => {
    const refusedParams = Object.fromEntries(
      Object.entries(extra).map(([name, value]) => [name, value === '<forbidden>' ? forbiddenApi : value]),
    );
    const assertion = await signAssertion(key, { iss: clientId, sub: clientId, aud: baseUrl });
    const before = await pushedCount();

    const refused = await par(assertion, authorizeParams(refusedParams));
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe(error);
    expect(refused.headers.location).toBeUndefined();
    expect(await pushedCount()).toBe(before);

    const accepted = await par(assertion, authorizeParams());
    expect(accepted.status).toBe(201);
    expect(accepted.body.request_uri).toMatch(/^urn:ietf:params:oauth:request_uri:/);
    expect(await pushedCount()).toBe(before + 1);

    const replayed = await par(assertion, authorizeParams());
    expect(replayed.status).toBe(401);
    expect(replayed.body.error).toBe('invalid_client');
    expect(await lastFailure()).toMatchObject({ reason: 'assertion_replayed', endpoint: 'par' });
    expect(await pushedCount()).toBe(before + 1);
  });

  test('a DPoP proof whose key is not the dpop_jkt sent: invalid_dpop_proof, and the same assertion then pushes with the proof', async () => {
    const proofKey = await makeClientKey('ES256');
    const otherKey = await makeClientKey('ES256');
    const htu = `${t.ctx.config.baseUrl}/api/oauth/par`;
    const assertion = await signAssertion(key, { iss: clientId, sub: clientId, aud: baseUrl });

    const refused = await par(assertion, authorizeParams({ dpop_jkt: await thumbprintOf(otherKey) })).set(
      'DPoP',
      await dpopProof(proofKey, { htu }),
    );
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_dpop_proof');

    const accepted = await par(assertion, authorizeParams({ dpop_jkt: await thumbprintOf(proofKey) })).set(
      'DPoP',
      await dpopProof(proofKey, { htu }),
    );
    expect(accepted.status).toBe(201);
    const hash = createHash('sha256').update(accepted.body.request_uri).digest('hex');
    const row = await t.db('oauth_pushed_requests').where({ request_uri_hash: hash }).first();
    const params = typeof row.params === 'string' ? JSON.parse(row.params) : row.params;
    expect(params.dpop_jkt).toBe(await thumbprintOf(proofKey));

    const replayed = await par(assertion, authorizeParams()).set('DPoP', await dpopProof(proofKey, { htu }));
    expect(replayed.status).toBe(401);
    expect(await lastFailure()).toMatchObject({ reason: 'assertion_replayed', endpoint: 'par' });
  });

  test('an assertion that fails its own checks is still 401, whatever the parameters', async () => {
    const foreign = await makeClientKey();
    const assertion = await signAssertion(foreign, { iss: clientId, sub: clientId, aud: baseUrl });
    const res = await par(assertion, authorizeParams({ response_type: 'token' }));
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
  });
});

import { KeyObject, sign } from 'node:crypto';
import fc from 'fast-check';
import * as jose from 'jose';
import request from 'supertest';
import { makeApiResource, makeAppClient, answerOnDevicePage } from '../helpers/apps';
import { makeClientKey, type ClientKeyPair } from '../helpers/client-keys';
import { claimsOf, dpopProof, thumbprintOf } from '../helpers/dpop';
import { makeSignedInUser, signIn, makeUser } from '../helpers/factories';
import { basicAuth, obtainCode } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Issue 34, DPoP (RFC 9449) with proofs made by hand: every grant binds its tokens to the proof's key (`token_type:
 * DPoP`, `cnf.jkt` in the access token and at introspection), a public client's refresh token is bound too, userinfo
 * and /api/auth/me take a bound token only with a proof of its key, and every refusal of a proof, at the token endpoint
 * (400 invalid_dpop_proof) and at a resource (401 with a DPoP challenge). The libraries' own DPoP support is driven in
 * dpop-libraries.test.ts.
 */
let t: TestApp;
let tokenUrl: string;
let es256: ClientKeyPair;
let other: ClientKeyPair;

beforeAll(async () => {
  t = await createTestApp();
  tokenUrl = `${t.ctx.config.baseUrl}/api/oauth/token`;
  es256 = await makeClientKey('ES256');
  other = await makeClientKey('ES256');
});
afterAll(async () => {
  await t?.close();
});

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

const token = (form: Record<string, string>, headers: Record<string, string> = {}) =>
  request(t.app).post('/api/oauth/token').set(headers).type('form').send(form);

const proofFor = (key: ClientKeyPair, extra: Parameters<typeof dpopProof>[1] | object = {}, claims = {}, header = {}) =>
  dpopProof(key, { htu: tokenUrl, now: t.clock.now(), ...extra }, claims, header);

async function machine(extra: Parameters<typeof makeAppClient>[1] = {}) {
  const client = await makeAppClient(t, { grantTypes: ['client_credentials'], redirectUris: [], scopes: ['read'], ...extra });
  return { ...client, auth: basicAuth(client.clientId, client.clientSecret!) };
}

async function introspect(accessToken: string) {
  const rs = await machine();
  return request(t.app).post('/api/oauth/introspect').set('Authorization', rs.auth).type('form').send({ token: accessToken });
}

/** A signed-in browser's code for `client`, exchanged with a DPoP proof of `key` (or none). */
async function codeGrant(
  client: Awaited<ReturnType<typeof makeAppClient>>,
  key: ClientKeyPair | undefined,
  extra: Record<string, string> = {},
) {
  const { agent } = await signIn(t, await makeUser(t));
  const { code, verifier, redirectUri } = await obtainCode(agent, { ...client, clientSecret: '' }, extra);
  const headers: Record<string, string> = key ? { DPoP: await proofFor(key) } : {};
  if (client.clientSecret) headers.Authorization = basicAuth(client.clientId, client.clientSecret);
  return token(
    {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: redirectUri,
      ...(client.clientSecret ? {} : { client_id: client.clientId }),
      ...(extra.resource ? { resource: extra.resource } : {}),
    },
    headers,
  );
}

describe('discovery', () => {
  test.each([
    '/.well-known/openid-configuration',
    '/.well-known/oauth-authorization-server',
    '/api/oauth/.well-known/openid-configuration',
  ])('%s lists dpop_signing_alg_values_supported', async (path) => {
    const res = await request(t.app).get(path);
    expect(res.status).toBe(200);
    expect(res.body.dpop_signing_alg_values_supported).toEqual(['ES256', 'RS256', 'PS256', 'EdDSA', 'Ed25519']);
  });
});

describe('client_credentials', () => {
  test.each(['ES256', 'RS256', 'PS256', 'EdDSA'] as const)(
    'a %s proof binds the token: token_type DPoP, cnf.jkt, introspection',
    async (alg) => {
      const key = await makeClientKey(alg);
      const client = await machine();
      const res = await token({ grant_type: 'client_credentials' }, { Authorization: client.auth, DPoP: await proofFor(key) });
      expect(res.status).toBe(200);
      expect(res.body.token_type).toBe('DPoP');
      const jkt = await thumbprintOf(key);
      expect(claimsOf(res.body.access_token).cnf).toEqual({ jkt });
      const described = await introspect(res.body.access_token);
      expect(described.body).toMatchObject({ active: true, token_type: 'DPoP', cnf: { jkt } });
    },
  );

  test('without a proof the token stays a Bearer token without cnf', async () => {
    const client = await machine();
    const res = await token({ grant_type: 'client_credentials' }, { Authorization: client.auth });
    expect(res.body.token_type).toBe('Bearer');
    expect(claimsOf(res.body.access_token).cnf).toBeUndefined();
    expect((await introspect(res.body.access_token)).body).not.toHaveProperty('cnf');
  });

  test('for an API (RFC 9068 token): cnf.jkt in the token and at introspection', async () => {
    const api = await makeApiResource(t, { scopes: ['read'] });
    const client = await machine({ allowedResources: [api.identifier] });
    const res = await token(
      { grant_type: 'client_credentials', resource: api.identifier },
      { Authorization: client.auth, DPoP: await proofFor(es256) },
    );
    expect(res.status).toBe(200);
    expect(claimsOf(res.body.access_token)).toMatchObject({ aud: api.identifier, cnf: { jkt: await thumbprintOf(es256) } });
    expect((await introspect(res.body.access_token)).body).toMatchObject({ active: true, aud: api.identifier, token_type: 'DPoP' });
  });
});

describe('authorization_code and refresh_token', () => {
  test('a public client: access and refresh token bound; the refresh needs a proof of the same key', async () => {
    const client = await makeAppClient(t, { type: 'public' });
    const res = await codeGrant(client, es256);
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe('DPoP');
    const jkt = await thumbprintOf(es256);
    expect(claimsOf(res.body.access_token).cnf).toEqual({ jkt });
    expect(claimsOf(res.body.refresh_token).cnf).toEqual({ jkt });
    expect((await introspect(res.body.access_token)).body).toMatchObject({ active: true, token_type: 'DPoP', cnf: { jkt } });

    const refresh = (headers: Record<string, string>) =>
      token({ grant_type: 'refresh_token', refresh_token: res.body.refresh_token, client_id: client.clientId }, headers);
    const bare = await refresh({});
    expect(bare.status).toBe(400);
    expect(bare.body.error).toBe('invalid_dpop_proof');
    const wrongKey = await refresh({ DPoP: await proofFor(other) });
    expect(wrongKey.status).toBe(400);
    expect(wrongKey.body.error).toBe('invalid_dpop_proof');
    // Neither refusal spent the refresh token.
    const ok = await refresh({ DPoP: await proofFor(es256) });
    expect(ok.status).toBe(200);
    expect(ok.body.token_type).toBe('DPoP');
    expect(claimsOf(ok.body.access_token).cnf).toEqual({ jkt });
    expect(claimsOf(ok.body.refresh_token).cnf).toEqual({ jkt });
    const next = await token(
      { grant_type: 'refresh_token', refresh_token: ok.body.refresh_token, client_id: client.clientId },
      { DPoP: await proofFor(other) },
    );
    expect(next.body.error).toBe('invalid_dpop_proof');
  });

  test('a confidential client: the refresh token is not bound; a refresh binds the new token to its own proof', async () => {
    const client = await makeAppClient(t);
    const res = await codeGrant(client, es256);
    expect(res.body.token_type).toBe('DPoP');
    expect(claimsOf(res.body.refresh_token).cnf).toBeUndefined();
    const auth = basicAuth(client.clientId, client.clientSecret!);
    const rekeyed = await token(
      { grant_type: 'refresh_token', refresh_token: res.body.refresh_token },
      { Authorization: auth, DPoP: await proofFor(other) },
    );
    expect(rekeyed.status).toBe(200);
    expect(claimsOf(rekeyed.body.access_token).cnf).toEqual({ jkt: await thumbprintOf(other) });
    const plain = await token({ grant_type: 'refresh_token', refresh_token: rekeyed.body.refresh_token }, { Authorization: auth });
    expect(plain.body.token_type).toBe('Bearer');
    expect(claimsOf(plain.body.access_token).cnf).toBeUndefined();
  });

  test('with a resource: the RFC 9068 token carries cnf.jkt', async () => {
    const api = await makeApiResource(t, { scopes: ['invoices:read'] });
    const client = await makeAppClient(t, { type: 'public', allowedResources: [api.identifier], scopes: ['openid', 'invoices:read'] });
    const res = await codeGrant(client, es256, { resource: api.identifier, scope: 'openid invoices:read' });
    expect(res.status).toBe(200);
    expect(claimsOf(res.body.access_token)).toMatchObject({ aud: api.identifier, cnf: { jkt: await thumbprintOf(es256) } });
  });

  test('a refusal of the proof does not spend the authorization code', async () => {
    const client = await makeAppClient(t, { type: 'public' });
    const { agent } = await signIn(t, await makeUser(t));
    const { code, verifier, redirectUri } = await obtainCode(agent, { ...client, clientSecret: '' });
    const form = { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, client_id: client.clientId };
    const bad = await token(form, { DPoP: await proofFor(es256, { htm: 'GET' }) });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('invalid_dpop_proof');
    const good = await token(form, { DPoP: await proofFor(es256) });
    expect(good.status).toBe(200);
    expect(good.body.token_type).toBe('DPoP');
  });
});

test('device_code: the polling request with a proof gets bound tokens', async () => {
  const client = await makeAppClient(t, { type: 'public', grantTypes: [DEVICE_GRANT, 'refresh_token'], redirectUris: [] });
  const started = await request(t.app)
    .post('/api/oauth/device_authorization')
    .type('form')
    .send({ client_id: client.clientId, scope: 'openid' });
  const { agent } = await signIn(t, await makeUser(t));
  await answerOnDevicePage(agent, started.body.user_code, 'approve');
  const res = await token(
    { grant_type: DEVICE_GRANT, device_code: started.body.device_code, client_id: client.clientId },
    { DPoP: await proofFor(es256) },
  );
  expect(res.status).toBe(200);
  expect(res.body.token_type).toBe('DPoP');
  expect(claimsOf(res.body.refresh_token).cnf).toEqual({ jkt: await thumbprintOf(es256) });
});

describe('refusals of a proof at the token endpoint: 400 invalid_dpop_proof', () => {
  const refusals: Array<[string, RegExp, () => Promise<string | string[]>]> = [
    ['not a JWS', /not a compact JWS/, async () => 'not-a-proof'],
    ['typ is not dpop+jwt', /typ dpop\+jwt/, () => proofFor(es256, {}, {}, { typ: 'JWT' })],
    [
      'an algorithm not offered (HS256)',
      /signed with one of ES256, RS256, PS256, EdDSA/,
      async () => {
        const secret = new TextEncoder().encode('0123456789abcdef0123456789abcdef');
        return new jose.SignJWT({ htm: 'POST', htu: tokenUrl, iat: Math.floor(Date.now() / 1000), jti: 'x' })
          .setProtectedHeader(
            JSON.parse(JSON.stringify({ alg: 'HS256', typ: 'dpop+jwt', jwk: { kty: 'oct', k: 'MDEyMzQ1Njc4OWFiY2RlZg' } })),
          )
          .sign(secret);
      },
    ],
    [
      'alg none',
      /signed with one of/,
      async () => {
        const head = Buffer.from(JSON.stringify({ alg: 'none', typ: 'dpop+jwt', jwk: es256.publicJwk })).toString('base64url');
        const body = Buffer.from(JSON.stringify({ htm: 'POST', htu: tokenUrl, iat: Math.floor(Date.now() / 1000), jti: 'n' })).toString(
          'base64url',
        );
        return `${head}.${body}.c2ln`;
      },
    ],
    ['no jwk header', /carry its public key/, () => proofFor(es256, {}, {}, { jwk: undefined })],
    // The proof's own key pair, its private half in the header: refused for carrying a private key, nothing else.
    [
      'a private key in the jwk header',
      /never a private one/,
      async () => proofFor(es256, {}, {}, { jwk: await jose.exportJWK(es256.privateKey) }),
    ],
    ['a symmetric jwk', /never a private one/, () => proofFor(es256, {}, {}, { jwk: { kty: 'oct', k: 'c2VjcmV0' } })],
    [
      'signed by another key than the jwk names',
      /does not verify/,
      () => proofFor(es256, {}, {}, { jwk: (({ kid: _k, use: _u, ...rest }) => rest)(other.publicJwk) }),
    ],
    [
      'a key of another type than its alg (an Ed25519 jwk under ES256)',
      /does not verify/,
      async () => proofFor(es256, {}, {}, { jwk: (await makeClientKey('EdDSA')).publicJwk }),
    ],
    [
      'a crit header (an extension this server does not know)',
      /must not carry a crit header/,
      async () => {
        // jose refuses to sign an unknown critical extension, so the proof is signed by hand.
        const { kid: _k, use: _u, ...jwk } = es256.publicJwk;
        const head = { alg: 'ES256', typ: 'dpop+jwt', jwk, crit: ['x-ext'], 'x-ext': true };
        const claims = { htm: 'POST', htu: tokenUrl, iat: Math.floor(t.clock.now().getTime() / 1000), jti: 'crit' };
        const input = [head, claims].map((part) => Buffer.from(JSON.stringify(part)).toString('base64url')).join('.');
        const signature = sign('sha256', Buffer.from(input), { key: KeyObject.from(es256.privateKey), dsaEncoding: 'ieee-p1363' });
        return `${input}.${signature.toString('base64url')}`;
      },
    ],
    ['an exp in the past', /does not verify/, () => proofFor(es256, {}, { exp: Math.floor(t.clock.now().getTime() / 1000) - 5 })],
    ['htm is not POST', /htm must be POST/, () => proofFor(es256, { htm: 'GET' })],
    [
      'htu is another URL',
      /htu must be http:\/\/sso\.test\/api\/oauth\/token/,
      () => proofFor(es256, { htu: 'http://sso.test/api/oauth/par' }),
    ],
    ['htu on another host', /htu must be/, () => proofFor(es256, { htu: 'http://evil.test/api/oauth/token' })],
    ['iat 61 s old', /iat must be within 60 seconds/, () => proofFor(es256, { now: new Date(t.clock.now().getTime() - 61_000) })],
    ['iat 61 s ahead', /iat must be within 60 seconds/, () => proofFor(es256, { now: new Date(t.clock.now().getTime() + 61_000) })],
    ['no iat', /iat must be/, () => proofFor(es256, {}, { iat: undefined })],
    ['no jti', /needs a jti/, () => proofFor(es256, {}, { jti: undefined })],
    ['no htu', /htu must be/, () => proofFor(es256, {}, { htu: undefined })],
    ['two DPoP headers', /exactly one DPoP header/, async () => [await proofFor(es256), await proofFor(es256)]],
    [
      'a tampered signature',
      /does not verify/,
      async () => {
        const proof = await proofFor(es256);
        return `${proof.slice(0, -4)}${proof.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
      },
    ],
  ];
  test.each(refusals)('%s', async (_name, reason, make) => {
    const client = await machine();
    const res = await request(t.app)
      .post('/api/oauth/token')
      .set('Authorization', client.auth)
      // Two values are sent as two DPoP header lines.
      .set({ DPoP: await make() })
      .type('form')
      .send({ grant_type: 'client_credentials' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_dpop_proof', error_description: expect.stringMatching(reason) });
  });

  test('htu is compared without query and fragment; iat 50 s off is accepted (the window is 60 s; the margin absorbs the run time)', async () => {
    const client = await machine();
    const withQuery = await token(
      { grant_type: 'client_credentials' },
      { Authorization: client.auth, DPoP: await proofFor(es256, { htu: `${tokenUrl}?x=1#f` }) },
    );
    expect(withQuery.body.token_type).toBe('DPoP');
    const early = await token(
      { grant_type: 'client_credentials' },
      { Authorization: client.auth, DPoP: await proofFor(es256, { now: new Date(t.clock.now().getTime() - 50_000) }) },
    );
    expect(early.body.token_type).toBe('DPoP');
  });

  test('a proof is accepted once per key (its jti is spent in the database)', async () => {
    const client = await machine();
    const proof = await proofFor(es256);
    const first = await token({ grant_type: 'client_credentials' }, { Authorization: client.auth, DPoP: proof });
    expect(first.status).toBe(200);
    const again = await token({ grant_type: 'client_credentials' }, { Authorization: client.auth, DPoP: proof });
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_dpop_proof');
    // The same jti under another key is another proof.
    const jti = claimsOf(proof).jti;
    const otherKey = await token(
      { grant_type: 'client_credentials' },
      { Authorization: client.auth, DPoP: await proofFor(other, {}, { jti }) },
    );
    expect(otherKey.status).toBe(200);
  });

  test('concurrent uses of one proof: exactly one is accepted', async () => {
    const client = await machine();
    const proof = await proofFor(es256);
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => token({ grant_type: 'client_credentials' }, { Authorization: client.auth, DPoP: proof })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400, 400, 400, 400]);
  });

  test('fuzzed proofs and headers are always a 4xx, never a 5xx', async () => {
    const client = await machine();
    const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
    const shapes = fc.oneof(
      fc.string({ maxLength: 300 }),
      fc.tuple(fc.jsonValue(), fc.jsonValue(), fc.string({ maxLength: 40 })).map(([h, p, s]) => `${b64(h)}.${b64(p)}.${b64(s)}`),
      fc
        .record({
          alg: fc.constantFrom('ES256', 'RS256', 'PS256', 'EdDSA', 'none', 'HS256'),
          typ: fc.constantFrom('dpop+jwt', 'JWT'),
          jwk: fc.jsonValue(),
        })
        .map((h) => `${b64(h)}.${b64({ htm: 'POST', htu: tokenUrl, iat: 1, jti: 'j' })}.c2ln`),
    );
    await fc.assert(
      fc.asyncProperty(shapes, async (proof) => {
        const header = proof.replace(/[^\x21-\x7e]/g, '');
        const res = await token({ grant_type: 'client_credentials' }, { Authorization: client.auth, DPoP: header });
        expect(res.status).toBeGreaterThanOrEqual(400);
        expect(res.status).toBeLessThan(500);
      }),
      { numRuns: 60 },
    );
  });
});

describe('server nonces (the dpop_nonce_required setting)', () => {
  let admin: string;
  beforeAll(async () => {
    admin = (await makeSignedInUser(t, ['super_admin'])).bearer;
    const set = await request(t.app).patch('/api/admin/settings').set('Authorization', admin).send({ dpop_nonce_required: true });
    expect(set.status).toBe(200);
    await t.ctx.settings.refresh();
  });
  afterAll(async () => {
    await request(t.app).patch('/api/admin/settings').set('Authorization', admin).send({ dpop_nonce_required: false });
    await t.ctx.settings.refresh();
  });

  test('a proof without a nonce is use_dpop_nonce with a DPoP-Nonce header; with it, tokens and a fresh nonce', async () => {
    const client = await machine();
    const first = await token({ grant_type: 'client_credentials' }, { Authorization: client.auth, DPoP: await proofFor(es256) });
    expect(first.status).toBe(400);
    expect(first.body.error).toBe('use_dpop_nonce');
    const nonce = first.headers['dpop-nonce'];
    expect(nonce).toMatch(/^[\w-]{43}$/);
    const wrong = await token(
      { grant_type: 'client_credentials' },
      { Authorization: client.auth, DPoP: await proofFor(es256, { nonce: 'made-up' }) },
    );
    expect(wrong.body.error).toBe('use_dpop_nonce');
    const second = await token(
      { grant_type: 'client_credentials' },
      { Authorization: client.auth, DPoP: await proofFor(es256, { nonce }) },
    );
    expect(second.status).toBe(200);
    expect(second.body.token_type).toBe('DPoP');
    expect(second.headers['dpop-nonce']).toMatch(/^[\w-]{43}$/);
    // A nonce lasts its minute and the next, then it is asked for again.
    t.clock.advance(125);
    try {
      const stale = await token(
        { grant_type: 'client_credentials' },
        { Authorization: client.auth, DPoP: await proofFor(es256, { nonce }) },
      );
      expect(stale.body.error).toBe('use_dpop_nonce');
      expect(stale.headers['dpop-nonce']).not.toBe(nonce);
    } finally {
      t.clock.advance(-125);
    }
  });

  test('at userinfo: 401 with a use_dpop_nonce challenge and the nonce', async () => {
    const client = await makeAppClient(t, { type: 'public' });
    const { agent } = await signIn(t, await makeUser(t));
    const { code, verifier, redirectUri } = await obtainCode(agent, { ...client, clientSecret: '' });
    const form = { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, client_id: client.clientId };
    const asked = await token(form, { DPoP: await proofFor(es256) });
    const issued = await token(form, { DPoP: await proofFor(es256, { nonce: asked.headers['dpop-nonce'] }) });
    expect(issued.body.token_type).toBe('DPoP');
    const at = issued.body.access_token as string;
    const userinfoUrl = `${t.ctx.config.baseUrl}/api/oauth/userinfo`;
    const res = await request(t.app)
      .get('/api/oauth/userinfo')
      .set('Authorization', `DPoP ${at}`)
      .set('DPoP', await dpopProof(es256, { htm: 'GET', htu: userinfoUrl, accessToken: at, now: t.clock.now() }));
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^DPoP error="use_dpop_nonce"/);
    const nonce = res.headers['dpop-nonce'];
    const ok = await request(t.app)
      .get('/api/oauth/userinfo')
      .set('Authorization', `DPoP ${at}`)
      .set('DPoP', await dpopProof(es256, { htm: 'GET', htu: userinfoUrl, accessToken: at, nonce, now: t.clock.now() }));
    expect(ok.status).toBe(200);
  });
});

describe('userinfo and /api/auth/me with a DPoP-bound token', () => {
  let at: string;
  let unbound: string;
  beforeAll(async () => {
    const client = await makeAppClient(t, { type: 'public' });
    at = (await codeGrant(client, es256)).body.access_token;
    unbound = (await codeGrant(client, undefined)).body.access_token;
  });

  describe.each([
    ['GET', '/api/oauth/userinfo'],
    ['POST', '/api/oauth/userinfo'],
    ['GET', '/api/auth/me'],
  ])('%s %s', (method, path) => {
    const url = () => `${t.ctx.config.baseUrl}${path}`;
    const call = (authorization: string, dpop?: string) => {
      const req = method === 'GET' ? request(t.app).get(path) : request(t.app).post(path);
      req.set('Authorization', authorization);
      if (dpop !== undefined) req.set('DPoP', dpop);
      return req;
    };
    const proof = (extra: Partial<Parameters<typeof dpopProof>[1]> = {}, key = es256, claims = {}) =>
      dpopProof(key, { htm: method, htu: url(), accessToken: at, now: t.clock.now(), ...extra }, claims);
    const expectChallenge = (res: request.Response, error: string) => {
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(
        new RegExp(`^DPoP error="${error}", error_description="[^"]+", algs="ES256 RS256 PS256 EdDSA Ed25519"$`),
      );
    };

    test('accepted as Authorization: DPoP with a proof of its key (ath)', async () => {
      const res = await call(`DPoP ${at}`, await proof());
      expect(res.status).toBe(200);
      expect(path === '/api/auth/me' ? res.body.user.email : res.body.sub).toEqual(expect.any(String));
    });

    test('refused as a Bearer token, with a DPoP challenge', async () => {
      expectChallenge(await call(`Bearer ${at}`), 'invalid_token');
      expectChallenge(await call(`Bearer ${at}`, await proof()), 'invalid_token');
    });

    test('refused without a proof, with a proof lacking or with a wrong ath, of another key, for another URL or method, replayed', async () => {
      expectChallenge(await call(`DPoP ${at}`), 'invalid_dpop_proof');
      expectChallenge(await call(`DPoP ${at}`, await proof({ accessToken: undefined })), 'invalid_dpop_proof');
      expectChallenge(await call(`DPoP ${at}`, await proof({ accessToken: `${at}x` })), 'invalid_dpop_proof');
      expectChallenge(await call(`DPoP ${at}`, await proof({}, other)), 'invalid_dpop_proof');
      expectChallenge(await call(`DPoP ${at}`, await proof({ htu: `${t.ctx.config.baseUrl}/api/oauth/token` })), 'invalid_dpop_proof');
      expectChallenge(await call(`DPoP ${at}`, await proof({ htm: method === 'GET' ? 'POST' : 'GET' })), 'invalid_dpop_proof');
      expectChallenge(await call(`DPoP ${at}`, await proof({ now: new Date(t.clock.now().getTime() - 90_000) })), 'invalid_dpop_proof');
      const once = await proof();
      expect((await call(`DPoP ${at}`, once)).status).toBe(200);
      expectChallenge(await call(`DPoP ${at}`, once), 'invalid_dpop_proof');
    });

    test('an unbound token keeps working as Bearer, and is refused under the DPoP scheme', async () => {
      expect((await call(`Bearer ${unbound}`)).status).toBe(200);
      const res = await call(`DPoP ${unbound}`, await proof({ accessToken: unbound }));
      expectChallenge(res, 'invalid_token');
    });
  });
});

describe('requiring DPoP (dpop_bound_access_tokens) on a client or an API', () => {
  let admin: string;
  beforeAll(async () => {
    admin = (await makeSignedInUser(t, ['super_admin'])).bearer;
  });

  test('a client (admin API): a token request without a proof is invalid_dpop_proof; with one, a DPoP token', async () => {
    const created = await request(t.app)
      .post('/api/admin/oauth-clients')
      .set('Authorization', admin)
      .send({ name: 'Bound machine', grant_types: ['client_credentials'], scopes: ['read'], dpop_bound_access_tokens: true });
    expect(created.status).toBe(201);
    expect(created.body.client.dpop_bound_access_tokens).toBe(true);
    const auth = basicAuth(created.body.client.client_id, created.body.client_secret);
    const bare = await token({ grant_type: 'client_credentials' }, { Authorization: auth });
    expect(bare.status).toBe(400);
    expect(bare.body).toEqual({ error: 'invalid_dpop_proof', error_description: expect.stringContaining('must send a DPoP proof') });
    expect((await token({ grant_type: 'client_credentials' }, { Authorization: auth, DPoP: await proofFor(es256) })).body.token_type).toBe(
      'DPoP',
    );
    const off = await request(t.app)
      .put(`/api/admin/oauth-clients/${created.body.client.client_id}`)
      .set('Authorization', admin)
      .send({ dpop_bound_access_tokens: false });
    expect(off.body.client.dpop_bound_access_tokens).toBe(false);
    expect((await token({ grant_type: 'client_credentials' }, { Authorization: auth })).body.token_type).toBe('Bearer');
  });

  test('a public client: the code exchange without a proof is refused and the code stays usable', async () => {
    const client = await makeAppClient(t, { type: 'public' });
    await t.db('oauth_clients').where({ client_id: client.clientId }).update({ dpop_bound_access_tokens: true });
    const { agent } = await signIn(t, await makeUser(t));
    const { code, verifier, redirectUri } = await obtainCode(agent, { ...client, clientSecret: '' });
    const form = { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, client_id: client.clientId };
    expect((await token(form)).body.error).toBe('invalid_dpop_proof');
    expect((await token(form, { DPoP: await proofFor(es256) })).body.token_type).toBe('DPoP');
  });

  test('an API (admin API): tokens for it need a proof at every grant; refusals burn neither code nor refresh token', async () => {
    const created = await request(t.app)
      .post('/api/admin/api-resources')
      .set('Authorization', admin)
      .send({
        identifier: `https://bound-${Date.now()}.api.test/`,
        name: 'Bound API',
        scopes: ['ledger:read'],
        dpop_bound_access_tokens: true,
      });
    expect(created.status).toBe(201);
    expect(created.body.resource.dpop_bound_access_tokens).toBe(true);
    const api = created.body.resource.identifier as string;

    const m = await machine({ allowedResources: [api], scopes: ['ledger:read'] });
    const bare = await token({ grant_type: 'client_credentials', resource: api }, { Authorization: m.auth });
    expect(bare.status).toBe(400);
    expect(bare.body).toEqual({
      error: 'invalid_dpop_proof',
      error_description: expect.stringContaining(`Tokens for ${api} must be DPoP-bound`),
    });
    // Without a resource the client's token is for the issuer: not this API, so no proof is needed.
    const m2 = await machine({ allowedResources: [api, 'https://other.api.test/'], scopes: ['ledger:read'] });
    expect((await token({ grant_type: 'client_credentials' }, { Authorization: m2.auth })).body.token_type).toBe('Bearer');

    const client = await makeAppClient(t, { allowedResources: [api], scopes: ['openid', 'ledger:read'] });
    const auth = basicAuth(client.clientId, client.clientSecret!);
    const { agent } = await signIn(t, await makeUser(t));
    const { code, verifier, redirectUri } = await obtainCode(
      agent,
      { ...client, clientSecret: '' },
      { resource: api, scope: 'openid ledger:read' },
    );
    const form = { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, resource: api };
    expect((await token(form, { Authorization: auth })).body.error).toBe('invalid_dpop_proof');
    const issued = await token(form, { Authorization: auth, DPoP: await proofFor(es256) });
    expect(issued.status).toBe(200);
    expect(claimsOf(issued.body.access_token)).toMatchObject({ aud: api, cnf: { jkt: await thumbprintOf(es256) } });

    const refreshForm = { grant_type: 'refresh_token', refresh_token: issued.body.refresh_token, resource: api };
    expect((await token(refreshForm, { Authorization: auth })).body.error).toBe('invalid_dpop_proof');
    const refreshed = await token(refreshForm, { Authorization: auth, DPoP: await proofFor(es256) });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.token_type).toBe('DPoP');
  });

  test('dynamic registration (RFC 7591) and the console form set it', async () => {
    const open = await createTestApp({ env: { CLIENT_REGISTRATION: 'open' } });
    try {
      const res = await request(open.app)
        .post('/api/oauth/register')
        .send({ redirect_uris: ['http://127.0.0.1/cb'], token_endpoint_auth_method: 'none', dpop_bound_access_tokens: true });
      expect(res.status).toBe(201);
      expect(res.body.dpop_bound_access_tokens).toBe(true);
      expect((await open.db('oauth_clients').where({ client_id: res.body.client_id }).first()).dpop_bound_access_tokens).toBe(true);
      const wrong = await request(open.app)
        .post('/api/oauth/register')
        .send({ redirect_uris: ['http://127.0.0.1/cb'], token_endpoint_auth_method: 'none', dpop_bound_access_tokens: 'yes' });
      expect(wrong.status).toBe(400);
    } finally {
      await open.close();
    }
    const { agent } = await makeSignedInUser(t, ['super_admin']);
    const page = await agent.get('/admin/applications/new?preset=custom');
    expect(page.text).toContain('name="dpop"');
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)![1]!;
    const created = await agent
      .post('/admin/applications')
      .type('form')
      .send({
        csrf,
        name: 'Console DPoP',
        type: 'public',
        grant_types: ['authorization_code', 'refresh_token'],
        redirect_uris: 'https://rp.example.test/cb',
        post_logout_redirect_uris: '',
        scopes: ['openid'],
        dpop: 'true',
      });
    expect(created.status).toBe(201);
    const id = /id="client-id">([^<]+)</.exec(created.text)![1]!;
    expect((await t.db('oauth_clients').where({ client_id: id }).first()).dpop_bound_access_tokens).toBe(true);
  });
});

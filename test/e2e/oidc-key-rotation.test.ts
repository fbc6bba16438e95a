import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import request from 'supertest';
import { createApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { createDb } from '../../src/db';
import { ManualClock } from '../../src/lib/clock';
import { createLogger } from '../../src/lib/logger';
import { closeServiceContext, createServiceContext } from '../../src/create-context';
import type { ServiceContext } from '../../src/services/context';
import { currentSigningKey, rotateSigningKey } from '../../src/services/oidc/signing-keys.service';
import { makeClient, makeUser, signIn } from '../helpers/factories';
import { basicAuth, exchangeCode, obtainCode } from '../helpers/oauth';
import { runCli } from '../helpers/processes';
import { createTestApp, TEST_ENV, type TestApp } from '../helpers/test-app';

/**
 * Signing keys shared by two instances on one database (CONTRACT §9): the first start generates exactly one key even
 * when both start at once; `npm run admin -- rotate-signing-key` (the real CLI process) makes a new key current; an
 * id_token signed before the rotation still validates afterwards against the JWKS of either instance, and the retired
 * key leaves the JWKS once the id_tokens it signed have expired.
 */
let a: TestApp;
let b: { app: ReturnType<typeof createApp>; ctx: ServiceContext; clock: ManualClock };

beforeAll(async () => {
  a = await createTestApp();
  // The second instance: its own process-wide context (caches, clock) on the first one's database.
  const config = loadConfig({ ...TEST_ENV, DATABASE_URL: a.databaseUrl });
  const logger = createLogger(config.logLevel);
  const clock = new ManualClock();
  const ctx = createServiceContext(config, { db: createDb(config, { logger }), clock, logger });
  b = { app: createApp({ ctx }), ctx, clock };
});
afterAll(async () => {
  await closeServiceContext(b.ctx);
  await a.close();
});

const jwksOf = async (app: TestApp['app']) => (await request(app).get('/api/oauth/jwks')).body as JSONWebKeySet;
const kidOf = (jwt: string) => (JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString()) as { kid: string }).kid;

async function verifyWith(app: TestApp['app'], idToken: string, clientId: string) {
  return jwtVerify(idToken, createLocalJWKSet(await jwksOf(app)), { issuer: 'http://sso.test', audience: clientId });
}

test('two instances starting together generate one key, sealed at rest', async () => {
  const [ka, kb] = await Promise.all([currentSigningKey(a.ctx), currentSigningKey(b.ctx)]);
  expect(ka.kid).toBe(kb.kid);
  const rows = await a.db('oidc_signing_keys').select('*');
  expect(rows).toHaveLength(1);
  expect(rows[0].alg).toBe('RS256');
  expect(rows[0].private_jwk_sealed).toMatch(/^v1\./);
  expect(rows[0].private_jwk_sealed).not.toContain('"d"');
  expect(rows[0].public_jwk).not.toHaveProperty('d');
  const jwks = await jwksOf(a.app);
  expect(jwks.keys).toEqual([expect.objectContaining({ kid: ka.kid, alg: 'RS256', use: 'sig', kty: 'RSA' })]);
  expect(jwks.keys[0]).not.toHaveProperty('d');
  const res = await request(b.app).get('/api/oauth/jwks');
  expect(res.headers['cache-control']).toBe('public, max-age=300');
});

test('rotate-signing-key: old id_tokens still validate on both instances; the old key retires after an id_token lifetime', async () => {
  const user = await makeUser(a);
  const client = await makeClient(a);
  const { agent } = await signIn(a, user);
  const { code, verifier } = await obtainCode(agent, client);
  const before = await exchangeCode(a, client, { code, verifier });
  expect(before.status).toBe(200);
  const oldKid = kidOf(before.body.id_token);

  const rotated = await runCli('admin', ['rotate-signing-key'], {
    ...process.env,
    ...TEST_ENV,
    DATABASE_URL: a.databaseUrl,
    LOG_LEVEL: 'silent',
  });
  expect(rotated.stderr).toBe('');
  expect(rotated.code).toBe(0);
  expect(rotated.stdout).toMatch(new RegExp(`New current signing key \\S+ \\(RS256\\); retired: ${oldKid}`));

  // Instance B picks the new key up once its cache (30 s) lapses; a refresh there signs with it.
  b.clock.advance(31);
  const refreshed = await request(b.app)
    .post('/api/oauth/token')
    .set('Authorization', basicAuth(client.clientId, client.clientSecret))
    .type('form')
    .send({ grant_type: 'refresh_token', refresh_token: before.body.refresh_token });
  expect(refreshed.status).toBe(200);
  const newKid = kidOf(refreshed.body.id_token);
  expect(newKid).not.toBe(oldKid);

  for (const instance of [a.app, b.app]) {
    expect((await jwksOf(instance)).keys.map((k) => k.kid).sort()).toEqual([oldKid, newKid].sort());
    await expect(verifyWith(instance, before.body.id_token, client.clientId)).resolves.toMatchObject({ payload: { sub: user.id } });
    await expect(verifyWith(instance, refreshed.body.id_token, client.clientId)).resolves.toMatchObject({ payload: { sub: user.id } });
  }

  // After an id_token lifetime (plus the margin) nothing the old key signed is live: it leaves the JWKS.
  a.clock.advance(3600 + 301);
  expect((await jwksOf(a.app)).keys.map((k) => k.kid)).toEqual([newKid]);
}, 90_000);

test('a changed KEYS_SECRET: signing says to rotate, and rotating makes a key that opens', async () => {
  const config = loadConfig({ ...TEST_ENV, DATABASE_URL: a.databaseUrl, KEYS_SECRET: 'another-keys-secret-0123456789abcdefghij' });
  const logger = createLogger(config.logLevel);
  const ctx = createServiceContext(config, { db: createDb(config, { logger }), logger });
  try {
    await expect(currentSigningKey(ctx)).rejects.toThrow(/does not open with this KEYS_SECRET: run npm run admin -- rotate-signing-key/);
    const { kid } = await rotateSigningKey(ctx);
    expect((await currentSigningKey(ctx)).kid).toBe(kid);
  } finally {
    await closeServiceContext(ctx);
  }
});

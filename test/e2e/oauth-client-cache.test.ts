import type { Express } from 'express';
import request from 'supertest';
import { createApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { createDb } from '../../src/db';
import * as clientsRepo from '../../src/db/repositories/oauth-clients.repo';
import { ManualClock } from '../../src/lib/clock';
import { createLogger } from '../../src/lib/logger';
import type { ServiceContext } from '../../src/services/context';
import { closeServiceContext, createServiceContext } from '../../src/services/create-context';
import { createCapturingMailer } from '../helpers/test-app';
import { generateClientSecret } from '../../src/services/oauth/client-secrets';
import { makeSignedInUser, makeUser, signIn } from '../helpers/factories';
import { basicAuth, issueOAuthTokens, obtainCode, exchangeCode } from '../helpers/oauth';
import { createTestApp, TEST_ENV, type TestApp } from '../helpers/test-app';

/**
 * Issue 10: the token endpoint's refresh grant takes the client from a per-instance cache instead of reading it, and
 * the refresh rotation statement checks the cached version (bumped by the database on every update of the client).
 * Two instances on one database: whatever changes a client on one applies to the very next refresh on the other.
 */
let a: TestApp;
let b: { app: Express; ctx: ServiceContext };
let adminOnB: string;

beforeAll(async () => {
  a = await createTestApp();
  // A second instance on the same database, with its own caches.
  const config = loadConfig({ ...TEST_ENV, DATABASE_URL: a.databaseUrl });
  const db = createDb(config, { poolMax: 5 });
  const ctx = createServiceContext(config, { db, clock: a.clock, logger: createLogger('silent'), mailer: createCapturingMailer([]) });
  b = { app: createApp({ ctx }), ctx };
  adminOnB = (await makeSignedInUser(a, ['admin'])).bearer;
});
afterAll(async () => {
  await closeServiceContext(b.ctx);
  await a.close();
});

/** A client created through instance B's admin API, and an OAuth grant for a user of it made on instance A. */
async function clientWithTokens(scopes = 'openid profile email') {
  const created = await request(b.app)
    .post('/api/admin/oauth-clients')
    .set('Authorization', adminOnB)
    .send({ name: 'Cached', redirect_uris: ['https://cached.test/callback'], scopes });
  expect(created.status).toBe(201);
  const client = { clientId: created.body.client.client_id as string, clientSecret: created.body.client_secret as string, redirectUris: ['https://cached.test/callback'], scopes: scopes.split(' ') };
  const { agent } = await makeSignedInUser(a);
  const tokens = await issueOAuthTokens(a, agent, client as never, { scope: scopes });
  return { client, tokens, agent };
}

const refreshOn = (app: Express, client: { clientId: string }, secret: string, refreshToken: string, form: Record<string, string> = {}) =>
  request(app)
    .post('/api/oauth/token')
    .set('Authorization', basicAuth(client.clientId, secret))
    .type('form')
    .send({ grant_type: 'refresh_token', refresh_token: refreshToken, ...form });

test('a refresh with a client this instance authenticated before reads no client row; its version is checked in the rotation', async () => {
  const { client, tokens } = await clientWithTokens();
  const reads = jest.spyOn(clientsRepo, 'findClientById');
  try {
    const first = await refreshOn(a.app, client, client.clientSecret, tokens.refresh_token);
    expect(first.status).toBe(200);
    const second = await refreshOn(a.app, client, client.clientSecret, first.body.refresh_token);
    expect(second.status).toBe(200);
    expect(second.body.id_token).toEqual(expect.any(String));
    expect(reads).not.toHaveBeenCalled();
  } finally {
    reads.mockRestore();
  }
});

test('a secret rotated on another instance: the old one is refused at once here, and the refused refresh used nothing up', async () => {
  const { client, tokens } = await clientWithTokens();
  const warm = await refreshOn(a.app, client, client.clientSecret, tokens.refresh_token);
  expect(warm.status).toBe(200);
  const rotated = await request(b.app).post(`/api/admin/oauth-clients/${client.clientId}/rotate-secret`).set('Authorization', adminOnB);
  expect(rotated.status).toBe(200);
  const newSecret = rotated.body.client_secret as string;

  const old = await refreshOn(a.app, client, client.clientSecret, warm.body.refresh_token);
  expect(old.status).toBe(401);
  expect(old.body.error).toBe('invalid_client');
  // The refresh token presented with the old secret is still the live one.
  const fresh = await refreshOn(a.app, client, newSecret, warm.body.refresh_token);
  expect(fresh.status).toBe(200);
  // The old secret stays refused, also once the new one is cached.
  expect((await refreshOn(a.app, client, client.clientSecret, fresh.body.refresh_token)).status).toBe(401);
  expect((await refreshOn(a.app, client, newSecret, fresh.body.refresh_token)).status).toBe(200);
});

test.each([
  ['a token that is no JWT', () => ({ refresh_token: 'not-a-token' })],
  ['no refresh_token', () => ({})],
  ["another client's token", (other: string) => ({ refresh_token: other })],
  ['a scope it does not hold', (_other: string, own: string) => ({ refresh_token: own, scope: 'openid offline_access' })],
] as Array<[string, (other: string, own: string) => Record<string, string>]>)(
  'with a secret rotated away, a refresh with the old secret is 401 invalid_client, also with %s',
  async (_what, form) => {
    const { client, tokens } = await clientWithTokens();
    const other = await clientWithTokens();
    // Instance A caches the client with the secret that is about to be rotated away.
    const warm = await refreshOn(a.app, client, client.clientSecret, tokens.refresh_token);
    expect(warm.status).toBe(200);
    await request(b.app).post(`/api/admin/oauth-clients/${client.clientId}/rotate-secret`).set('Authorization', adminOnB).expect(200);
    const res = await request(a.app)
      .post('/api/oauth/token')
      .set('Authorization', basicAuth(client.clientId, client.clientSecret))
      .type('form')
      .send({ grant_type: 'refresh_token', ...form(other.tokens.refresh_token, warm.body.refresh_token) });
    expect([res.status, res.body.error, res.headers['www-authenticate']]).toEqual([401, 'invalid_client', 'Basic realm="oauth"']);
  },
);

test('a client row deleted and inserted again under the same id with a new secret: the old secret is refused', async () => {
  const { client, tokens } = await clientWithTokens();
  const warm = await refreshOn(a.app, client, client.clientSecret, tokens.refresh_token);
  expect(warm.status).toBe(200);
  // An operator's SQL: the row (and its sessions, by cascade) goes, the same client_id comes back with a new secret.
  const row = await a.db('oauth_clients').where({ client_id: client.clientId }).first();
  await a.db('oauth_clients').where({ client_id: client.clientId }).delete();
  const renewed = generateClientSecret();
  await clientsRepo.insertClient(a.db, { clientId: client.clientId, name: row.name, secretHash: renewed.secretHash, redirectUris: client.redirectUris, scopes: client.scopes, now: a.clock.now() });
  // A new grant, made through instance B (instance A's cache still holds the old row).
  const user = await makeUser(a);
  const { agent } = await signIn({ ...a, app: b.app }, user);
  const renewedClient = { ...client, clientSecret: renewed.secret };
  const { code, verifier, redirectUri } = await obtainCode(agent, renewedClient as never, { scope: 'openid profile email' });
  const exchanged = await exchangeCode({ ...a, app: b.app }, renewedClient as never, { code, verifier, redirectUri });
  expect(exchanged.status).toBe(200);
  const old = await refreshOn(a.app, client, client.clientSecret, exchanged.body.refresh_token);
  expect([old.status, old.body.error]).toEqual([401, 'invalid_client']);
  expect((await refreshOn(a.app, client, renewed.secret, exchanged.body.refresh_token)).status).toBe(200);
});

test('a row brought back with a version this instance has cached but another secret (a restore): the old secret is refused', async () => {
  const { client, tokens } = await clientWithTokens();
  const warm = await refreshOn(a.app, client, client.clientSecret, tokens.refresh_token);
  expect(warm.status).toBe(200);
  const { version } = await a.db('oauth_clients').where({ client_id: client.clientId }).first();
  const renewed = generateClientSecret();
  // What a restore of an older backup can do: the same version number, another secret.
  await a.db.transaction(async (trx) => {
    await trx.raw('alter table oauth_clients disable trigger oauth_clients_bump_version');
    await trx('oauth_clients').where({ client_id: client.clientId }).update({ secret_hash: renewed.secretHash, version });
    await trx.raw('alter table oauth_clients enable trigger oauth_clients_bump_version');
  });
  const old = await refreshOn(a.app, client, client.clientSecret, warm.body.refresh_token);
  expect([old.status, old.body.error]).toEqual([401, 'invalid_client']);
  expect((await refreshOn(a.app, client, renewed.secret, warm.body.refresh_token)).status).toBe(200);
});

test('scopes narrowed on another instance apply to the very next refresh here', async () => {
  const { client, tokens } = await clientWithTokens();
  const warm = await refreshOn(a.app, client, client.clientSecret, tokens.refresh_token);
  expect(warm.body.scope).toBe('openid profile email');
  const updated = await request(b.app).put(`/api/admin/oauth-clients/${client.clientId}`).set('Authorization', adminOnB).send({ scopes: 'openid email' });
  expect(updated.status).toBe(200);
  const next = await refreshOn(a.app, client, client.clientSecret, warm.body.refresh_token);
  expect(next.status).toBe(200);
  expect(next.body.scope).toBe('openid email');
});

test('a client whose scopes were narrowed here and widened again elsewhere is decided from the database, not the cache', async () => {
  const { client, tokens } = await clientWithTokens('openid profile');
  // Instance A caches the client while it holds only `email`: the grant's scope is then entirely outside it.
  await request(b.app).put(`/api/admin/oauth-clients/${client.clientId}`).set('Authorization', adminOnB).send({ scopes: 'email' }).expect(200);
  const refused = await refreshOn(a.app, client, client.clientSecret, tokens.refresh_token);
  expect(refused.status).toBe(400);
  expect(refused.body.error).toBe('invalid_scope');
  await request(b.app).put(`/api/admin/oauth-clients/${client.clientId}`).set('Authorization', adminOnB).send({ scopes: 'openid profile' }).expect(200);
  // A's cache still says `email`: the refusal it would give is decided again from a fresh read, which allows it.
  const allowed = await refreshOn(a.app, client, client.clientSecret, tokens.refresh_token);
  expect(allowed.status).toBe(200);
  expect(allowed.body.scope).toBe('openid profile');
});

test('a refresh naming its scope is not refused from a cached scope list that another instance has since widened', async () => {
  const { client, tokens } = await clientWithTokens('openid profile');
  const { agent: other } = await makeSignedInUser(a);
  const otherTokens = await issueOAuthTokens(a, other, client as never, { scope: 'openid profile' });
  await request(b.app).put(`/api/admin/oauth-clients/${client.clientId}`).set('Authorization', adminOnB).send({ scopes: 'openid' }).expect(200);
  // Another user's refresh makes instance A cache the client as it is now: `openid` only.
  expect((await refreshOn(a.app, client, client.clientSecret, otherTokens.refresh_token)).body.scope).toBe('openid');
  await request(b.app).put(`/api/admin/oauth-clients/${client.clientId}`).set('Authorization', adminOnB).send({ scopes: 'openid profile' }).expect(200);
  const res = await refreshOn(a.app, client, client.clientSecret, tokens.refresh_token, { scope: 'openid profile' });
  expect(res.status).toBe(200);
  expect(res.body.scope).toBe('openid profile');
});

test('a client deactivated on another instance is refused at the next refresh here', async () => {
  const { client, tokens } = await clientWithTokens();
  const warm = await refreshOn(a.app, client, client.clientSecret, tokens.refresh_token);
  expect(warm.status).toBe(200);
  await request(b.app).delete(`/api/admin/oauth-clients/${client.clientId}`).set('Authorization', adminOnB).expect(200);
  const next = await refreshOn(a.app, client, client.clientSecret, warm.body.refresh_token);
  expect(next.status).toBe(401);
  expect(next.body.error).toBe('invalid_client');
});

test('reuse detection still revokes the session when the client comes from the cache', async () => {
  const { client, tokens } = await clientWithTokens();
  const first = await refreshOn(a.app, client, client.clientSecret, tokens.refresh_token);
  expect(first.status).toBe(200);
  a.clock.advance(60);
  // The first token again, past the grace window: reuse, the session ends, the newer token dies with it.
  const reused = await refreshOn(a.app, client, client.clientSecret, tokens.refresh_token);
  expect(reused.status).toBe(400);
  expect(reused.body.error).toBe('invalid_grant');
  expect((await refreshOn(a.app, client, client.clientSecret, first.body.refresh_token)).body.error).toBe('invalid_grant');
});

test('the code exchange never takes the client from the cache', async () => {
  const { client, agent } = await clientWithTokens();
  const { code, verifier, redirectUri } = await obtainCode(agent, client as never, { scope: 'openid' });
  const rotated = await request(b.app).post(`/api/admin/oauth-clients/${client.clientId}/rotate-secret`).set('Authorization', adminOnB);
  expect(rotated.status).toBe(200);
  const res = await exchangeCode(a, client as never, { code, verifier, redirectUri });
  expect(res.status).toBe(401);
  expect(res.body.error).toBe('invalid_client');
});

test('the database renews a client version on every update of its row, whoever writes it, and never hands one out twice', async () => {
  const { client } = await clientWithTokens();
  const version = async () => BigInt((await a.db('oauth_clients').where({ client_id: client.clientId }).first()).version as string);
  const seen = [await version()];
  for (let i = 0; i < 2; i++) {
    await a.db('oauth_clients').where({ client_id: client.clientId }).update({ name: 'Renamed by SQL' });
    seen.push(await version());
  }
  expect(seen[1]! > seen[0]! && seen[2]! > seen[1]!).toBe(true);
  // A row inserted again does not start over.
  await a.db('oauth_clients').where({ client_id: client.clientId }).delete();
  await clientsRepo.insertClient(a.db, { clientId: client.clientId, name: 'Again', secretHash: 'x', redirectUris: client.redirectUris, scopes: client.scopes, now: a.clock.now() });
  expect(await version()).toBeGreaterThan(seen[2]!);
});

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
import { makeSignedInUser } from '../helpers/factories';
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

const refreshOn = (app: Express, client: { clientId: string }, secret: string, refreshToken: string) =>
  request(app).post('/api/oauth/token').set('Authorization', basicAuth(client.clientId, secret)).type('form').send({ grant_type: 'refresh_token', refresh_token: refreshToken });

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
  const res = await request(a.app)
    .post('/api/oauth/token')
    .set('Authorization', basicAuth(client.clientId, client.clientSecret))
    .type('form')
    .send({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, scope: 'openid profile' });
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

test('the database bumps a client version on every update of its row, whoever writes it', async () => {
  const { client } = await clientWithTokens();
  const version = async () => (await a.db('oauth_clients').where({ client_id: client.clientId }).first()).version as string;
  const before = BigInt(await version());
  await a.db('oauth_clients').where({ client_id: client.clientId }).update({ name: 'Renamed by SQL' });
  await a.db('oauth_clients').where({ client_id: client.clientId }).update({ name: 'Renamed by SQL' });
  expect(BigInt(await version())).toBe(before + 2n);
});

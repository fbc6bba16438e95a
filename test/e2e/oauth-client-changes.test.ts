import type { Express } from 'express';
import request from 'supertest';
import { createApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { createDb } from '../../src/db';
import * as clientsRepo from '../../src/db/repositories/oauth-clients.repo';
import { createLogger } from '../../src/lib/logger';
import type { ServiceContext } from '../../src/services/context';
import { closeServiceContext, createServiceContext } from '../../src/create-context';
import { createCapturingMailer } from '../helpers/test-app';
import { generateClientSecret } from '../../src/services/oauth/client-secrets';
import { makeSignedInUser, makeUser, signIn } from '../helpers/factories';
import { basicAuth, issueOAuthTokens, obtainCode, exchangeCode } from '../helpers/oauth';
import { createTestApp, TEST_ENV, type TestApp } from '../helpers/test-app';

/**
 * Two instances on one database: whatever changes a client on one applies to the very next token request on the other.
 * Both keep the clients they authenticated (issue 33: the client cache, emptied by the `sso_clients` notification of
 * every change and by every write of this process; test/e2e/client-cache.test.ts), as production instances do.
 */
let a: TestApp;
let b: { app: Express; ctx: ServiceContext };
let adminOnB: string;

beforeAll(async () => {
  a = await createTestApp();
  // A second instance on the same database.
  const config = loadConfig({ ...TEST_ENV, DATABASE_URL: a.databaseUrl });
  const db = createDb(config, { poolMax: 5 });
  const ctx = createServiceContext(config, { db, clock: a.clock, logger: createLogger('silent'), mailer: createCapturingMailer([]) });
  b = { app: createApp({ ctx }), ctx };
  a.ctx.clients.startSync({ connectionString: a.databaseUrl });
  b.ctx.clients.startSync({ connectionString: a.databaseUrl });
  while (!a.ctx.clients.active || !b.ctx.clients.active) await new Promise((resolve) => setTimeout(resolve, 10));
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
    .send({ name: 'Changing', redirect_uris: ['https://changing.test/callback'], scopes });
  expect(created.status).toBe(201);
  const client = {
    clientId: created.body.client.client_id as string,
    clientSecret: created.body.client_secret as string,
    redirectUris: ['https://changing.test/callback'],
    scopes: scopes.split(' '),
  };
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
    // Instance A has used the client with the secret that is about to be rotated away.
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
  await clientsRepo.insertClient(a.db, {
    clientId: client.clientId,
    name: row.name,
    secretHash: renewed.secretHash,
    redirectUris: client.redirectUris,
    scopes: client.scopes,
    now: a.clock.now(),
  });
  // A new grant, made through instance B.
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

test('scopes narrowed on another instance apply to the very next refresh here', async () => {
  const { client, tokens } = await clientWithTokens();
  const warm = await refreshOn(a.app, client, client.clientSecret, tokens.refresh_token);
  expect(warm.body.scope).toBe('openid profile email');
  const updated = await request(b.app)
    .put(`/api/admin/oauth-clients/${client.clientId}`)
    .set('Authorization', adminOnB)
    .send({ scopes: 'openid email' });
  expect(updated.status).toBe(200);
  const next = await refreshOn(a.app, client, client.clientSecret, warm.body.refresh_token);
  expect(next.status).toBe(200);
  expect(next.body.scope).toBe('openid email');
});

test('a client whose scopes were narrowed and widened again elsewhere is decided from the database', async () => {
  const { client, tokens } = await clientWithTokens('openid profile');
  // While the client holds only `email`, the grant's scope is entirely outside it.
  await request(b.app)
    .put(`/api/admin/oauth-clients/${client.clientId}`)
    .set('Authorization', adminOnB)
    .send({ scopes: 'email' })
    .expect(200);
  const refused = await refreshOn(a.app, client, client.clientSecret, tokens.refresh_token);
  expect(refused.status).toBe(400);
  expect(refused.body.error).toBe('invalid_scope');
  await request(b.app)
    .put(`/api/admin/oauth-clients/${client.clientId}`)
    .set('Authorization', adminOnB)
    .send({ scopes: 'openid profile' })
    .expect(200);
  const allowed = await refreshOn(a.app, client, client.clientSecret, tokens.refresh_token);
  expect(allowed.status).toBe(200);
  expect(allowed.body.scope).toBe('openid profile');
});

test('a refresh naming its scope is decided from the scope list another instance has since widened', async () => {
  const { client, tokens } = await clientWithTokens('openid profile');
  const { agent: other } = await makeSignedInUser(a);
  const otherTokens = await issueOAuthTokens(a, other, client as never, { scope: 'openid profile' });
  await request(b.app)
    .put(`/api/admin/oauth-clients/${client.clientId}`)
    .set('Authorization', adminOnB)
    .send({ scopes: 'openid' })
    .expect(200);
  // Another user's refresh on instance A while the client holds `openid` only.
  expect((await refreshOn(a.app, client, client.clientSecret, otherTokens.refresh_token)).body.scope).toBe('openid');
  await request(b.app)
    .put(`/api/admin/oauth-clients/${client.clientId}`)
    .set('Authorization', adminOnB)
    .send({ scopes: 'openid profile' })
    .expect(200);
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

test('reuse detection revokes the session', async () => {
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

test('a code exchange after a secret rotation elsewhere needs the new secret', async () => {
  const { client, agent } = await clientWithTokens();
  const { code, verifier, redirectUri } = await obtainCode(agent, client as never, { scope: 'openid' });
  const rotated = await request(b.app).post(`/api/admin/oauth-clients/${client.clientId}/rotate-secret`).set('Authorization', adminOnB);
  expect(rotated.status).toBe(200);
  const res = await exchangeCode(a, client as never, { code, verifier, redirectUri });
  expect(res.status).toBe(401);
  expect(res.body.error).toBe('invalid_client');
});

test("the client version (the removed cache's) is gone: no column, sequence, nor trigger but the change notification", async () => {
  const columns = await a.db('information_schema.columns').where({ table_name: 'oauth_clients', column_name: 'version' });
  expect(columns).toEqual([]);
  const sequence = await a.db.raw("select to_regclass('oauth_client_version_seq') as name");
  expect(sequence.rows[0].name).toBeNull();
  const triggers = await a.db('information_schema.triggers').where({ event_object_table: 'oauth_clients' });
  expect([...new Set(triggers.map((t: { trigger_name: string }) => t.trigger_name))]).toEqual(['oauth_clients_notify']);
});

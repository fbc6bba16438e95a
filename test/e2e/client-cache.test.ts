import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import type { Express } from 'express';
import { createApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { createDb } from '../../src/db';
import { createLogger } from '../../src/lib/logger';
import { sha256Hex } from '../../src/lib/crypto';
import type { ServiceContext } from '../../src/services/context';
import { closeServiceContext, createServiceContext } from '../../src/create-context';
import { clientWriteInFlight, clientWritesOfThisProcess } from '../../src/db/repositories/client-writes';
import { updateClient } from '../../src/db/repositories/oauth-clients.repo';
import { makeApiResource } from '../helpers/apps';
import { makeSignedInUser } from '../helpers/factories';
import { basicAuth } from '../helpers/oauth';
import { createCapturingMailer, createTestApp, TEST_ENV, type TestApp } from '../helpers/test-app';

/**
 * The per-instance client cache (issue 33, docs/performance.md "The client cache"): two instances on one database,
 * both keeping the clients they authenticated. A change made through one (or straight in the database, as another
 * process would) is refused or applied by the other on the very next request: a rotated secret, a deactivated or
 * deleted client, a changed API resource.
 */
let a: TestApp;
let b: { ctx: ServiceContext; app: Express; close(): Promise<void> };
let admin: string;

async function until(check: () => boolean): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > 5000) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

beforeAll(async () => {
  a = await createTestApp();
  a.ctx.clients.startSync({ connectionString: a.databaseUrl });
  const config = loadConfig({ ...TEST_ENV, DATA_DIR: path.join(os.tmpdir(), 'sso-test-data'), DATABASE_URL: a.databaseUrl });
  const logger = createLogger('silent');
  const ctx = createServiceContext(config, { db: createDb(config, { poolMax: 4, logger }), logger, mailer: createCapturingMailer([]) });
  await ctx.settings.refresh();
  ctx.clients.startSync({ connectionString: a.databaseUrl });
  b = { ctx, app: createApp({ ctx }), close: () => closeServiceContext(ctx) };
  await until(() => a.ctx.clients.active && b.ctx.clients.active);
  admin = (await makeSignedInUser(a, ['super_admin'])).bearer;
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

async function machineClient() {
  const resource = await makeApiResource(a, { scopes: ['invoices:read'] });
  const res = await request(a.app)
    .post('/api/admin/oauth-clients')
    .set('Authorization', admin)
    .send({ name: 'Cached machine', grant_types: ['client_credentials'], redirect_uris: [], allowed_resources: [resource.identifier] });
  expect(res.status).toBe(201);
  return { clientId: res.body.client.client_id as string, secret: res.body.client_secret as string, resource };
}

function clientCredentials(app: Express, clientId: string, secret: string, resource: string) {
  return request(app)
    .post('/api/oauth/token')
    .type('form')
    .set('Authorization', basicAuth(clientId, secret))
    .send({ grant_type: 'client_credentials', resource, scope: 'invoices:read' });
}

/** Two grants on B: the second is served with the client from B's memory. */
async function warm(clientId: string, secret: string, resource: string): Promise<void> {
  for (let i = 0; i < 2; i++) expect((await clientCredentials(b.app, clientId, secret, resource)).status).toBe(200);
  expect(b.ctx.clients.size).toBeGreaterThan(0);
}

test('a secret rotated on A: B refuses the old secret on the next request and takes the new one', async () => {
  const { clientId, secret, resource } = await machineClient();
  await warm(clientId, secret, resource.identifier);
  const rotated = await request(a.app).post(`/api/admin/oauth-clients/${clientId}/rotate-secret`).set('Authorization', admin);
  expect(rotated.status).toBe(200);
  const old = await clientCredentials(b.app, clientId, secret, resource.identifier);
  expect(old.status).toBe(401);
  expect(old.body.error).toBe('invalid_client');
  expect((await clientCredentials(b.app, clientId, rotated.body.client_secret, resource.identifier)).status).toBe(200);
});

test('a client deactivated on A (PUT, then DELETE), or its row deleted: B refuses it on the next request', async () => {
  const { clientId, secret, resource } = await machineClient();
  await warm(clientId, secret, resource.identifier);
  const put = await request(a.app).put(`/api/admin/oauth-clients/${clientId}`).set('Authorization', admin).send({ is_active: false });
  expect(put.status).toBe(200);
  expect((await clientCredentials(b.app, clientId, secret, resource.identifier)).body.error).toBe('invalid_client');
  const back = await request(a.app).put(`/api/admin/oauth-clients/${clientId}`).set('Authorization', admin).send({ is_active: true });
  expect(back.status).toBe(200);
  await warm(clientId, secret, resource.identifier);
  expect((await request(a.app).delete(`/api/admin/oauth-clients/${clientId}`).set('Authorization', admin)).status).toBe(200);
  expect((await clientCredentials(b.app, clientId, secret, resource.identifier)).body.error).toBe('invalid_client');
  await a.db('oauth_clients').where({ client_id: clientId }).update({ is_active: true });
  await until(() => b.ctx.clients.size === 0);
  await warm(clientId, secret, resource.identifier);
  await a.db('oauth_clients').where({ client_id: clientId }).delete();
  await until(() => b.ctx.clients.size === 0);
  const gone = await clientCredentials(b.app, clientId, secret, resource.identifier);
  expect(gone.status).toBe(401);
  expect(gone.body.error).toBe('invalid_client');
});

test('a change written straight into the database (another process): its notification empties both caches', async () => {
  const { clientId, secret, resource } = await machineClient();
  await warm(clientId, secret, resource.identifier);
  expect((await clientCredentials(a.app, clientId, secret, resource.identifier)).status).toBe(200);
  // No repository of this process is involved: only PostgreSQL's NOTIFY at commit can tell the instances.
  await a
    .db('oauth_clients')
    .where({ client_id: clientId })
    .update({ secret_hash: sha256Hex('another-secret') });
  await until(() => a.ctx.clients.size === 0 && b.ctx.clients.size === 0);
  for (const app of [a.app, b.app]) {
    expect((await clientCredentials(app, clientId, secret, resource.identifier)).body.error).toBe('invalid_client');
    expect((await clientCredentials(app, clientId, 'another-secret', resource.identifier)).status).toBe(200);
  }
  // An API resource's scopes changed the same way: the cached client's view of its allowed API follows.
  await warm(clientId, 'another-secret', resource.identifier);
  await a
    .db('api_resources')
    .where({ id: resource.id })
    .update({ scopes: JSON.stringify(['invoices:write']) });
  await until(() => b.ctx.clients.size === 0);
  const narrowed = await clientCredentials(b.app, clientId, 'another-secret', resource.identifier);
  expect(narrowed.body.error).toBe('invalid_scope');
});

test('a lookup on the writing instance while its transaction is open keeps nothing: after commit the change applies', async () => {
  const { clientId, secret, resource } = await machineClient();
  for (let i = 0; i < 2; i++) expect((await clientCredentials(a.app, clientId, secret, resource.identifier)).status).toBe(200);
  expect(a.ctx.clients.size).toBeGreaterThan(0);
  const trx = await a.db.transaction();
  try {
    await updateClient(trx, clientId, { name: 'Renamed in a transaction' }, new Date());
    // Not committed yet: the lookup reads the old row, and must not keep it past the commit.
    expect((await a.ctx.clients.find(clientId))?.name).toBe('Cached machine');
    expect(a.ctx.clients.size).toBe(0);
    await trx.commit();
  } finally {
    if (!trx.isCompleted()) await trx.rollback();
  }
  expect((await a.ctx.clients.find(clientId))?.name).toBe('Renamed in a transaction');
});

test('a write in a savepoint counts until the outermost transaction commits, not until the savepoint is released', async () => {
  const { clientId, secret, resource } = await machineClient();
  for (let i = 0; i < 2; i++) expect((await clientCredentials(a.app, clientId, secret, resource.identifier)).status).toBe(200);
  const trx = await a.db.transaction();
  try {
    await trx.transaction(async (savepoint) => {
      await updateClient(savepoint, clientId, { name: 'Renamed in a savepoint' }, new Date());
    });
    // Released, but nothing is committed: the lookup reads the old row and must not keep it past the commit.
    expect(clientWriteInFlight()).toBe(true);
    expect((await a.ctx.clients.find(clientId))?.name).toBe('Cached machine');
    expect(a.ctx.clients.size).toBe(0);
    await trx.commit();
  } finally {
    if (!trx.isCompleted()) await trx.rollback();
  }
  // The commit is seen when Knex settles the transaction's promise, a turn of the event loop after COMMIT returns.
  await new Promise((resolve) => setImmediate(resolve));
  expect(clientWriteInFlight()).toBe(false);
  expect((await a.ctx.clients.find(clientId))?.name).toBe('Renamed in a savepoint');
});

test('a write in a savepoint that is rolled back, or whose outer transaction is, changes nothing and publishes no change', async () => {
  const { clientId } = await machineClient();
  const trx = await a.db.transaction();
  try {
    let during = -1;
    await expect(
      trx.transaction(async (savepoint) => {
        await updateClient(savepoint, clientId, { name: 'Never committed' }, new Date());
        during = clientWritesOfThisProcess();
        throw new Error('refused after the write');
      }),
    ).rejects.toThrow('refused after the write');
    // Undone with its savepoint, while the outer transaction goes on: no write in flight, and no change published.
    expect(clientWriteInFlight()).toBe(false);
    expect(clientWritesOfThisProcess()).toBe(during);
    expect((await a.ctx.clients.find(clientId))?.name).toBe('Cached machine');
    await trx.commit();
  } finally {
    if (!trx.isCompleted()) await trx.rollback();
  }
  expect((await a.ctx.clients.find(clientId))?.name).toBe('Cached machine');
  // An outer transaction that fails after its savepoint was released undoes the write too.
  let during = -1;
  await expect(
    a.db.transaction(async (outer) => {
      await outer.transaction(async (savepoint) => {
        await updateClient(savepoint, clientId, { name: 'Released, then undone' }, new Date());
      });
      during = clientWritesOfThisProcess();
      expect(clientWriteInFlight()).toBe(true);
      throw new Error('outer refused');
    }),
  ).rejects.toThrow('outer refused');
  expect(clientWriteInFlight()).toBe(false);
  expect(clientWritesOfThisProcess()).toBe(during);
  expect((await a.ctx.clients.find(clientId))?.name).toBe('Cached machine');
});

test('while B does not listen, it keeps nothing and reads every client afresh', async () => {
  const { clientId, secret, resource } = await machineClient();
  await b.ctx.clients.stopSync();
  try {
    expect((await clientCredentials(b.app, clientId, secret, resource.identifier)).status).toBe(200);
    expect(b.ctx.clients.size).toBe(0);
    await a.db('oauth_clients').where({ client_id: clientId }).update({ is_active: false });
    expect((await clientCredentials(b.app, clientId, secret, resource.identifier)).body.error).toBe('invalid_client');
  } finally {
    b.ctx.clients.startSync({ connectionString: a.databaseUrl });
    await until(() => b.ctx.clients.active);
  }
});

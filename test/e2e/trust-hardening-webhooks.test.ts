import dns from 'node:dns';
import request from 'supertest';
import { insertWebhookSubscription } from '../../src/db/repositories/webhooks.repo';
import { startWebhookWorker, type WebhookWorker } from '../../src/services/webhooks/queue';
import { secretPurpose } from '../../src/services/webhooks/subscriptions.service';
import { makeSignedInUser, uniqueEmail } from '../helpers/factories';
import { createListeningTestApp } from '../helpers/oauth';
import type { TestApp } from '../helpers/test-app';

/**
 * CONTRACT §23 "Webhooks never target this server" (issue 30, medium "a webhook can feed itself"): a webhook aimed at
 * the server's own endpoints is refused when saved, and a subscription that points there anyway (a row written
 * directly) is never contacted at delivery time, so one event never turns into a stream of deliveries.
 */
let listening: Awaited<ReturnType<typeof createListeningTestApp>>;
let t: TestApp;
let baseUrl: string;
let port: number;
let admin: string;
let worker: WebhookWorker;

beforeAll(async () => {
  // WEBHOOK_ALLOW_PRIVATE: loopback receivers are allowed, and the server's own addresses are still refused.
  listening = await createListeningTestApp({ WEBHOOK_ALLOW_PRIVATE: 'true' });
  ({ t, baseUrl } = listening);
  port = Number(new URL(baseUrl).port);
  admin = (await makeSignedInUser(t, ['super_admin'])).bearer;
  worker = await startWebhookWorker(t.ctx, {
    connectionString: t.databaseUrl,
    retryDelaysSeconds: [0.2, 0.2],
    pollIntervalMs: 100,
    // A name of this machine that is none of its configured origins (a DNS alias, a reverse proxy's name).
    outbound: {
      resolve: async (host) =>
        host === 'alias.example' ? [{ address: '127.0.0.1', family: 4 }] : dns.promises.lookup(host, { all: true }),
    },
  });
});
afterAll(async () => {
  await worker?.stop();
  await listening?.stop();
});

test.each([
  ['BASE_URL itself', () => `${baseUrl}/api/oauth/token`],
  ['another loopback name on its port', () => `http://localhost:${port}/api/oauth/token`],
  ['its IPv6 loopback on its port', () => `http://[::1]:${port}/api/oauth/token`],
])('a webhook pointed at this server (%s) is refused on create and on update', async (_name, target) => {
  const created = await request(t.app)
    .post('/api/admin/webhooks')
    .set('Authorization', admin)
    .send({ url: target(), events: ['*'] });
  expect(created.status).toBe(400);
  expect(created.body).toMatchObject({ error: 'validation_error', details: [{ path: 'url' }] });

  const ok = await request(t.app)
    .post('/api/admin/webhooks')
    .set('Authorization', admin)
    .send({ url: 'http://127.0.0.1:9/hook', events: ['*'] });
  expect(ok.status).toBe(201);
  const updated = await request(t.app).put(`/api/admin/webhooks/${ok.body.webhook.id}`).set('Authorization', admin).send({ url: target() });
  expect(updated.status).toBe(400);
  expect(updated.body.details[0].path).toBe('url');
  await request(t.app).delete(`/api/admin/webhooks/${ok.body.webhook.id}`).set('Authorization', admin);
});

test.each([
  ['by its BASE_URL', '2d6a4f0e-8f0b-4a55-9a3c-2f6d0d6f7a11', () => `${baseUrl}/api/oauth/token`],
  [
    'by a name resolving to its listening address',
    '2d6a4f0e-8f0b-4a55-9a3c-2f6d0d6f7a12',
    () => `https://alias.example:${port}/api/oauth/token`,
  ],
])('a subscription pointing at this server anyway (%s) is not contacted at delivery time: no cascade', async (_name, id, target) => {
  await insertWebhookSubscription(t.db, {
    id,
    url: target(),
    events: ['*'],
    enabled: true,
    description: 'feeds itself',
    secretSealed: t.ctx.sealer.seal(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, secretPurpose(id)),
    now: new Date(),
  });
  const invited = await request(t.app)
    .post('/api/users')
    .set('Authorization', admin)
    .send({ email: uniqueEmail('loop'), first_name: 'Loop', last_name: 'Person' });
  expect(invited.status).toBe(201);
  await t.ctx.events.idle();

  // Every attempt of the first delivery has run (three attempts 0.2 s apart), and then some.
  const deadline = Date.now() + 20_000;
  for (;;) {
    const first = await t.db('webhook_deliveries').where({ subscription_id: id }).orderBy('id').first();
    if (first && first.status !== 'pending') break;
    if (Date.now() > deadline) throw new Error('the first delivery never finished');
    await new Promise((r) => setTimeout(r, 100));
  }
  await new Promise((r) => setTimeout(r, 1500));
  await t.ctx.events.idle();

  const rows: Array<{ event_type: string; last_response_status: number | null; last_error: string | null }> = await t
    .db('webhook_deliveries')
    .where({ subscription_id: id })
    .orderBy('id');
  const events = rows.map((r) => r.event_type);
  // Only events of the admin's own actions (the invitation and what it caused), none caused by a delivery.
  expect(events.filter((type) => type.startsWith('oauth.') || type.startsWith('auth.'))).toEqual([]);
  expect(rows.length).toBeLessThanOrEqual(2);
  expect(rows.every((r) => r.last_response_status === null)).toBe(true);
  // Refused before any connection: by name, or by the address the name resolved to (not a failed TLS handshake).
  expect(rows[0]!.last_error).toMatch(/^refused_address: .*this server/);
});

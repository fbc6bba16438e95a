import knexFactory from 'knex';
import type { LooseKnex } from '../helpers/test-app';
import { freePort } from '../helpers/oauth';
import { startServerProcess, type RunningServer } from '../helpers/processes';
import { createTestDatabase, TEST_ENV } from '../helpers/test-app';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

/**
 * Webhooks with real server processes on one PostgreSQL database (CONTRACT §17): two instances deliver every event
 * exactly once between them, and a delivery whose first attempt failed survives `kill -9` of the server: the
 * restarted process makes the next attempt on the production schedule (5 s after the first) with the same webhook-id.
 */
const ADMIN = { email: 'hooks-admin@example.test', password: 'hooks-admin-password' };
const json = (body: unknown, bearer?: string): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...(bearer ? { authorization: bearer } : {}) },
  body: JSON.stringify(body),
});

let dropDb: () => Promise<void>;
let databaseUrl: string;
let db: LooseKnex;
let env: NodeJS.ProcessEnv;
const servers: RunningServer[] = [];
let receiver: WebhookReceiver | undefined;

beforeAll(async () => {
  const database = await createTestDatabase();
  dropDb = database.drop;
  databaseUrl = database.url;
  db = knexFactory({ client: 'pg', connection: databaseUrl, pool: { min: 0, max: 2 } });
  env = {
    PATH: process.env.PATH,
    ...TEST_ENV,
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'info',
    BOOTSTRAP_ADMIN_EMAIL: ADMIN.email,
    BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password,
  };
});
afterAll(async () => {
  for (const s of servers) if (s.proc.exitCode === null && s.proc.signalCode === null) s.proc.kill('SIGKILL');
  await receiver?.close();
  await db?.destroy();
  await dropDb?.();
});

async function start(): Promise<RunningServer> {
  const port = await freePort();
  const server = await startServerProcess({ ...env, BASE_URL: `http://127.0.0.1:${port}` }, port);
  servers.push(server);
  return server;
}

async function bearerOf(server: RunningServer): Promise<string> {
  const res = await fetch(`${server.base}/api/auth/login`, json(ADMIN));
  expect(res.status).toBe(200);
  return `Bearer ${((await res.json()) as { accessToken: string }).accessToken}`;
}

async function invite(server: RunningServer, bearer: string): Promise<string> {
  const res = await fetch(
    `${server.base}/api/users`,
    json({ email: `p${Math.random().toString(36).slice(2)}@example.test`, first_name: 'P', last_name: 'Q' }, bearer),
  );
  expect(res.status).toBe(201);
  return ((await res.json()) as { user: { id: string } }).user.id;
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('two instances on one database deliver each event once; a delivery survives kill -9 of the server', async () => {
  receiver = await startWebhookReceiver();
  const [a, b] = await Promise.all([start(), start()]);
  const bearerA = await bearerOf(a);
  const bearerB = await bearerOf(b);
  const created = await fetch(`${a.base}/api/admin/webhooks`, json({ url: receiver.url, events: ['user.created'] }, bearerA));
  expect(created.status).toBe(201);
  const { webhook, secret } = (await created.json()) as { webhook: { id: string }; secret: string };
  receiver.secret = secret;

  // Events from both instances; both instances' workers take jobs from the one queue.
  for (let i = 0; i < 20; i++) await invite(i % 2 ? b : a, i % 2 ? bearerB : bearerA);
  await receiver.waitFor((r) => r.length >= 20);
  await until(
    '20 delivered',
    async () => (await db('webhook_deliveries').where({ status: 'delivered' }).count<{ count: string }[]>())[0]!.count === '20',
  );
  expect(receiver.received).toHaveLength(20);
  expect(new Set(receiver.received.map((r) => r.id)).size).toBe(20);
  expect(receiver.received.every((r) => r.verified && r.payload?.type === 'user.created')).toBe(true);

  // The receiver goes away (its port kept, so that nothing else takes it meanwhile: every connection is closed at
  // once); an event is committed and its first attempt fails; then the server dies without warning.
  await b.stop();
  receiver.setDown(true);
  receiver.received = [];
  const userId = await invite(a, bearerA);
  const event = await db('audit_events').where({ type: 'user.created', subject_id: userId }).first();
  expect(event).toBeDefined();
  await until(
    'the first attempt',
    async () => ((await db('webhook_deliveries').where({ event_id: event.id }).first())?.attempts ?? 0) >= 1,
  );
  a.proc.kill('SIGKILL');
  await new Promise((resolve) => a.proc.once('exit', resolve));
  const pending = await db('webhook_deliveries').where({ event_id: event.id }).first();
  expect(pending).toMatchObject({ status: 'pending', attempts: 1, last_response_status: null });
  expect(pending.last_error).toMatch(/^network: /);

  // The receiver is back on its address, and so is a server process: the retry is made, once, with the same id.
  expect(receiver.received).toEqual([]);
  receiver.setDown(false);
  await start();
  await receiver.waitFor((r) => r.length >= 1);
  expect(receiver.received[0]).toMatchObject({ id: String(event.id), verified: true });
  expect(receiver.received[0]!.payload!.data).toMatchObject({ subject_id: userId });
  await until(
    'delivered after the restart',
    async () => (await db('webhook_deliveries').where({ event_id: event.id }).first()).status === 'delivered',
  );
  expect(await db('webhook_deliveries').where({ event_id: event.id }).first()).toMatchObject({ status: 'delivered', attempts: 2 });
  expect(webhook.id).toBe(pending.subscription_id);
  expect(receiver.received).toHaveLength(1);
}, 240_000);

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { createApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { createDb } from '../../src/db';
import { createLogger } from '../../src/lib/logger';
import type { ServiceContext } from '../../src/services/context';
import { closeServiceContext, createServiceContext } from '../../src/create-context';
import { SETTINGS_POLL_MS } from '../../src/services/settings/live-settings';
import { makeSignedInUser } from '../helpers/factories';
import { createCapturingMailer, createTestApp, TEST_ENV, type TestApp } from '../helpers/test-app';

/**
 * CONTRACT §18: a change made on one instance takes effect on every other within 2 s, under load, without a failed
 * request. Instances here are full apps, each with its own pool, on one database, listening on real ports: A takes the
 * PATCH, B (and C) serve a steady stream of page and discovery requests meanwhile.
 */
const ENV = { ALLOWED_ORIGINS: '' };

interface Instance {
  ctx: ServiceContext;
  url: string;
  close(): Promise<void>;
}

function listen(app: http.RequestListener): Promise<{ url: string; server: http.Server }> {
  const server = http.createServer(app);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server })),
  );
}

/** Another instance on A's database: its own config, pool, service context and HTTP server. */
async function startInstance(databaseUrl: string, sync: { pollMs: number; listenUrl?: string }): Promise<Instance> {
  const config = loadConfig({ ...TEST_ENV, ...ENV, DATA_DIR: path.join(os.tmpdir(), 'sso-test-data'), DATABASE_URL: databaseUrl });
  const logger = createLogger('silent');
  const db = createDb(config, { poolMax: 10, logger });
  const ctx = createServiceContext(config, { db, logger, mailer: createCapturingMailer([]) });
  await ctx.settings.refresh();
  ctx.settings.startSync({ connectionString: sync.listenUrl ?? databaseUrl, pollMs: sync.pollMs });
  const { url, server } = await listen(createApp({ ctx }));
  return {
    ctx,
    url,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await closeServiceContext(ctx);
    },
  };
}

/** The loads still running: a test that fails before stopping its own has it stopped after it. */
const running = new Set<() => Promise<unknown>>();
afterEach(async () => {
  for (const stop of [...running]) await stop();
});

/** Requests in a loop from `workers` clients until stopped; every answer that is not 200 (or a network error) counts. */
function load(urls: string[], workers = 8) {
  let looping = true;
  const stats = { requests: 0, failures: [] as string[] };
  const loops = Array.from({ length: workers }, async (_, i) => {
    while (looping) {
      const url = urls[(stats.requests + i) % urls.length]!;
      try {
        const res = await fetch(url);
        await res.arrayBuffer();
        if (res.status !== 200) stats.failures.push(`${url}: ${res.status}`);
      } catch (err) {
        stats.failures.push(`${url}: ${(err as Error).message}`);
      }
      stats.requests++;
    }
  });
  const stop = async () => {
    looping = false;
    running.delete(stop);
    await Promise.all(loops);
    return stats;
  };
  running.add(stop);
  return { stats, stop };
}

/** Milliseconds until `check` holds (polled every 20 ms), or fails after 5 s. */
async function timeUntil(check: () => boolean | Promise<boolean>): Promise<number> {
  const start = Date.now();
  while (Date.now() - start < 5000) {
    if (await check()) return Date.now() - start;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('the change never arrived');
}

/**
 * The 2 s of CONTRACT §18 bound the propagation itself: the time until the instance's in-memory settings hold the
 * new value, polled without a request (a page request under the test's own load, on a loaded machine, can take longer
 * than the propagation did). Then the first page asked for must show it: nothing between the settings and the page
 * may serve the old value.
 */
const brandOf = (instance: Instance) => instance.ctx.settings.current.values.brand_name;

let a: TestApp;
let aUrl: string;
let aServer: http.Server;
let admin: string;
const instances: Instance[] = [];

beforeAll(async () => {
  a = await createTestApp({ env: ENV });
  ({ url: aUrl, server: aServer } = await listen(a.app));
  admin = (await makeSignedInUser(a, ['super_admin'])).bearer;
});
afterAll(async () => {
  for (const instance of instances) await instance.close();
  aServer?.closeAllConnections();
  await new Promise((resolve) => aServer?.close(resolve));
  await a.close();
});

async function patchOnA(body: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${aUrl}/api/admin/settings`, {
    method: 'PATCH',
    headers: { authorization: admin, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
}

const pageOf = async (base: string) => (await fetch(`${base}/login`)).text();
const discoveryOf = async (base: string) =>
  (await (await fetch(`${base}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;

test('LISTEN/NOTIFY: a PATCH on A reaches B under load within 2 s, no request failing', async () => {
  // B's periodic check is a minute away: only the notification can bring the change in time.
  const b = await startInstance(a.databaseUrl, { pollMs: 60_000 });
  instances.push(b);
  await timeUntil(async () => b.ctx.settings.listening);
  const traffic = load([`${b.url}/login`, `${b.url}/.well-known/openid-configuration`, `${b.url}/health`]);
  await new Promise((resolve) => setTimeout(resolve, 300));

  await patchOnA({ brand_name: 'Renamed Live', client_registration: 'token' });
  const elapsed = await timeUntil(() => brandOf(b) === 'Renamed Live');
  expect(elapsed).toBeLessThan(2000);
  expect(await pageOf(b.url)).toContain('Renamed Live');
  expect((await discoveryOf(b.url)).registration_endpoint).toBe('http://sso.test/api/oauth/register');

  await new Promise((resolve) => setTimeout(resolve, 300));
  const stats = await traffic.stop();
  expect(stats.failures).toEqual([]);
  expect(stats.requests).toBeGreaterThan(50);
});

test('the connection that LISTENs is lost: B reconnects, and a change made meanwhile still arrives within 2 s', async () => {
  const b = instances[0]!;
  const traffic = load([`${b.url}/login`, `${b.url}/.well-known/openid-configuration`]);
  const admin = knexFactory({ client: 'pg', connection: a.databaseUrl, pool: { min: 0, max: 1 } });
  try {
    const { rows } = await admin.raw(
      `select pg_terminate_backend(pid) as done from pg_stat_activity where datname = current_database() and query ilike 'listen sso_settings%'`,
    );
    expect(rows.length).toBeGreaterThan(0);
  } finally {
    await admin.destroy();
  }
  await patchOnA({ brand_name: 'Changed While Deaf' });
  const elapsed = await timeUntil(() => brandOf(b) === 'Changed While Deaf');
  expect(elapsed).toBeLessThan(2000);
  expect(await pageOf(b.url)).toContain('Changed While Deaf');
  await timeUntil(async () => b.ctx.settings.listening);
  const stats = await traffic.stop();
  expect(stats.failures).toEqual([]);
});

test('without notifications at all, the periodic version check brings the change within 2 s', async () => {
  // C's LISTEN connection can never open (nothing listens on that port): only the version check works.
  const c = await startInstance(a.databaseUrl, { pollMs: SETTINGS_POLL_MS, listenUrl: 'postgres://postgres@127.0.0.1:9/none' });
  instances.push(c);
  const traffic = load([`${c.url}/login`, `${c.url}/health`]);
  await patchOnA({ brand_name: 'Polled Name' });
  const elapsed = await timeUntil(() => brandOf(c) === 'Polled Name');
  expect(elapsed).toBeLessThan(2000);
  expect(await pageOf(c.url)).toContain('Polled Name');
  expect(c.ctx.settings.listening).toBe(false);
  const stats = await traffic.stop();
  expect(stats.failures).toEqual([]);
});

import net from 'node:net';
import { createDb, type Db } from '../../src/db';
import { createHealthProbe, HEALTH_MAX_AGE_MS, HEALTH_REFRESH_AFTER_MS } from '../../src/services/health.service';

/**
 * The /health probe against a real PostgreSQL reached through a TCP relay that the test can cut, with a movable clock:
 * concurrent checks share one query, the next probe starts in the background once a result is
 * HEALTH_REFRESH_AFTER_MS old, no result answers past HEALTH_MAX_AGE_MS, and a database that went away answers down.
 */
const target = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
let relay: net.Server;
const sockets = new Set<net.Socket>();
let db: Db;
let queries = 0;
/** Queries whose answer (or error) has come back. */
let answered = 0;
let clock = 0;

beforeAll(async () => {
  relay = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.host = `127.0.0.1:${(relay.address() as net.AddressInfo).port}`;
  db = createDb({ databaseUrl: url.toString() });
  db.on('query', () => queries++);
  db.on('query-response', () => answered++);
  db.on('query-error', () => answered++);
});

afterAll(async () => {
  await db.destroy();
  relay.close();
  for (const s of sockets) s.destroy();
});

/**
 * Lets a background probe finish: its query answered (on a loaded machine that can take longer than any fixed pause),
 * then a moment for the probe to keep the result. A query that never starts or never answers ends the wait at 5 s.
 */
async function settled(expectedQueries: number): Promise<void> {
  for (let i = 0; i < 500 && answered < expectedQueries; i++) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 50));
}

test('a storm of checks costs one query; the next starts in the background; a database that went away answers down', async () => {
  const probe = createHealthProbe(db, () => clock);

  const storm = await Promise.all(Array.from({ length: 50 }, () => probe.check()));
  expect(storm.every((ok) => ok)).toBe(true);
  expect(queries).toBe(1);

  clock += HEALTH_REFRESH_AFTER_MS - 1;
  expect(await probe.check()).toBe(true);
  await settled(1);
  expect(queries).toBe(1);

  // Old enough to refresh: answered from the current result at once, the next probe runs meanwhile (one, not 20).
  clock += 1;
  const answers = await Promise.all(Array.from({ length: 20 }, () => probe.check()));
  expect(answers.every((ok) => ok)).toBe(true);
  await settled(2);
  expect(queries).toBe(2);

  // The database goes away: open connections die and new ones are refused.
  relay.close();
  for (const s of sockets) s.destroy();
  expect(await probe.check()).toBe(true); // the result of a probe started less than HEALTH_MAX_AGE_MS ago
  clock += HEALTH_MAX_AGE_MS;
  expect(await probe.check()).toBe(false);
});

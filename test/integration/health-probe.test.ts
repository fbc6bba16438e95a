import net from 'node:net';
import { createDb, type Db } from '../../src/db';
import { createHealthProbe, HEALTH_MAX_AGE_MS } from '../../src/services/health.service';

/**
 * The /health probe against a real PostgreSQL reached through a TCP relay that the test can cut: concurrent checks
 * share one query, a result is reused for at most HEALTH_MAX_AGE_MS (a movable clock), and once the database has gone
 * away the first check after that age answers "down".
 */
const target = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
let relay: net.Server;
const sockets = new Set<net.Socket>();
let db: Db;
let queries = 0;
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
  db = createDb({ databaseUrl: url.toString(), dataDir: '/nonexistent' });
  db.on('query', () => queries++);
});

afterAll(async () => {
  await db.destroy();
  relay.close();
  for (const s of sockets) s.destroy();
});

test('a storm of checks costs one query per HEALTH_MAX_AGE_MS, then a database that went away answers down', async () => {
  const probe = createHealthProbe(db, () => clock);

  const storm = await Promise.all(Array.from({ length: 50 }, () => probe.check()));
  expect(storm.every((ok) => ok)).toBe(true);
  expect(queries).toBe(1);

  clock += HEALTH_MAX_AGE_MS - 1;
  expect(await probe.check()).toBe(true);
  expect(queries).toBe(1);

  clock += 1;
  expect(await probe.check()).toBe(true);
  expect(queries).toBe(2);

  // The database goes away: open connections die and new ones are refused.
  relay.close();
  for (const s of sockets) s.destroy();
  expect(await probe.check()).toBe(true); // the result of a probe started less than HEALTH_MAX_AGE_MS ago
  clock += HEALTH_MAX_AGE_MS;
  expect(await probe.check()).toBe(false);
});

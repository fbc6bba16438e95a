import { createDb, poolStats, preparedRows, type Db } from '../../src/db';
import { isConnectionError } from '../../src/db/pg-errors';
import { createTestDatabase } from '../helpers/test-app';

/**
 * The hot statements run as named prepared statements on pooled connections (issue 10). A migration run by another
 * instance (a rolling deploy) can change the shape of what such a statement returns; PostgreSQL then refuses the
 * cached plan (0A000), and the call must still succeed rather than fail every request on that connection.
 */
let db: Db;
let drop: () => Promise<void>;
let url: string;
beforeAll(async () => {
  const created = await createTestDatabase();
  drop = created.drop;
  url = created.url;
  // One connection in each pool: the statement is prepared on the statement pool's one connection, which is kept after
  // the refusal of its stale plan and sees the schema change (Knex's connection runs the ALTER).
  db = createDb({ databaseUrl: created.url }, { poolMax: 1 });
});
afterAll(async () => {
  await db.destroy();
  await drop();
});

test('a prepared statement whose result type changed under it is prepared again, once, under its next name', async () => {
  await db.raw('create table prepared_probe (a int)');
  await db.raw('insert into prepared_probe values (1)');
  const read = () => preparedRows(db, 'test_prepared_probe', 'select * from prepared_probe where a = $1', [1]);
  expect(await read()).toEqual([{ a: 1 }]);

  await db.raw('alter table prepared_probe add column b text');
  await db.raw("update prepared_probe set b = 'x'");
  expect(await read()).toEqual([{ a: 1, b: 'x' }]);
  expect(await read()).toEqual([{ a: 1, b: 'x' }]);
});

test('other errors are not retried', async () => {
  await expect(preparedRows(db, 'test_missing_table', 'select * from no_such_table where a = $1', [1])).rejects.toMatchObject({
    code: '42P01',
  });
});

test('a statement refused by PostgreSQL keeps its connection (and the statements prepared on it)', async () => {
  const backend = async () =>
    (await preparedRows<{ pid: number }>(db, 'test_backend_pid', 'select pg_backend_pid() as pid where $1::int = 1', [1]))[0]?.pid;
  const before = await backend();
  expect(before).toEqual(expect.any(Number));
  // A value PostgreSQL refuses (a NUL byte in text), a missing table: neither ends the connection (pg-pool's own `query`
  // would end it).
  await expect(preparedRows(db, 'test_text_value', 'select $1::text as t', ['a\u0000b'])).rejects.toMatchObject({ code: '22021' });
  await expect(preparedRows(db, 'test_missing_table', 'select * from no_such_table where a = $1', [1])).rejects.toMatchObject({
    code: '42P01',
  });
  expect(await backend()).toBe(before);
});

test('the pool internals this server reads are where it reads them (db/index.ts: poolStats over both pools)', async () => {
  await db.raw('select 1');
  await preparedRows(db, 'test_select_one', 'select $1::int as one', [1]);
  // One idle connection in Knex's pool, one in the statement pool.
  expect(poolStats(db)).toEqual({ max: 2, inUse: 0, idle: 2, waiting: 0 });
  const connection = await db.client.acquireConnection();
  expect(poolStats(db)).toEqual({ max: 2, inUse: 1, idle: 1, waiting: 0 });
  await db.client.releaseConnection(connection);
  expect(poolStats(db)).toEqual({ max: 2, inUse: 0, idle: 2, waiting: 0 });

  // The statement pool holds at most poolMax connections (1 here): a second statement waits for the first's.
  const slow = preparedRows(db, 'test_sleep', "select 'yes' as slept from pg_sleep($1::float8)", [3]);
  const queued = preparedRows<{ one: number }>(db, 'test_select_one', 'select $1::int as one', [2]);
  // pg-pool hands clients out on a later turn; the first statement then sleeps for three seconds, a window that a
  // loaded machine's slow turns do not close before the state is read (looked for up to 2 s).
  const waitUntil = Date.now() + 2000;
  while (poolStats(db)?.waiting !== 1 && Date.now() < waitUntil) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(poolStats(db)).toEqual({ max: 2, inUse: 1, idle: 1, waiting: 1 });
  expect(await queued).toEqual([{ one: 2 }]);
  expect(await slow).toEqual([{ slept: 'yes' }]);
  expect(poolStats(db)).toEqual({ max: 2, inUse: 0, idle: 2, waiting: 0 });
});

test('destroying the Db closes the connections of its statement pool too', async () => {
  const connections = async () =>
    Number(
      (
        await db.raw<{ rows: Array<{ n: string }> }>(
          "select count(*) as n from pg_stat_activity where datname = current_database() and backend_type = 'client backend'",
        )
      ).rows[0]?.n,
    );
  const settled = async (expected: number) => {
    for (let tries = 0; (await connections()) !== expected && tries < 40; tries++) await new Promise((resolve) => setTimeout(resolve, 50));
    return connections();
  };
  const other = createDb({ databaseUrl: url }, { poolMax: 1 });
  const before = await connections();
  expect(await preparedRows(other, 'test_select_one', 'select $1::int as one', [3])).toEqual([{ one: 3 }]);
  expect(await settled(before + 1)).toBe(before + 1);
  await other.destroy();
  expect(await settled(before)).toBe(before);
  // As Knex refuses a query after destroy, so does the statement pool (it is not opened again): 503, not 500.
  await expect(preparedRows(other, 'test_select_one', 'select $1::int as one', [4])).rejects.toMatchObject({ code: 'service_unavailable' });
});

test('a query that comes while the Db is being destroyed is refused at once (503), not kept for the acquire timeout', async () => {
  const other = createDb({ databaseUrl: url }, { poolMax: 1 });
  await other.raw('select 1');
  // tarn.js has aborted the acquires that were waiting and now closes its idle connection: an acquire that came now
  // (a request's read still running after its answer) would wait the whole 5 s acquire timeout, and its timer would
  // hold the process (a jest worker) that closed the Db.
  let late: Promise<unknown> | undefined;
  other.client.pool.on('destroyRequest', () => {
    late ??= other.raw('select 2').then(
      () => undefined,
      (err: unknown) => err,
    );
  });
  const started = Date.now();
  await other.destroy();
  expect(await late).toMatchObject({ code: 'service_unavailable' });
  // Well under the 5 s acquire timeout it would otherwise wait, with room for a loaded machine.
  expect(Date.now() - started).toBeLessThan(4000);
});

test('a database that does not answer fails a statement within the connect timeout, as a connection error (503)', async () => {
  const unreachable = createDb({ databaseUrl: 'postgres://postgres@127.0.0.1:1/nothing' }, { poolMax: 1 });
  const started = Date.now();
  const refused = await preparedRows(unreachable, 'test_select_one', 'select $1::int as one', [5]).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(Date.now() - started).toBeLessThan(2500);
  expect(isConnectionError(refused)).toBe(true);
  await unreachable.destroy();
});

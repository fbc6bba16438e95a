import { createDb, poolStats, preparedRows, type Db } from '../../src/db';
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
  // One connection: the statement is prepared on the very connection that sees the schema change.
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

test('the pool internals this server reads are where it reads them (db/index.ts: poolStats over both pools)', async () => {
  await db.raw('select 1');
  await preparedRows(db, 'test_select_one', 'select $1::int as one', [1]);
  // One idle connection in Knex's pool, one in the statement pool.
  expect(poolStats(db)).toEqual({ inUse: 0, idle: 2, waiting: 0 });
  const connection = await db.client.acquireConnection();
  expect(poolStats(db)).toEqual({ inUse: 1, idle: 1, waiting: 0 });
  await db.client.releaseConnection(connection);
  expect(poolStats(db)).toEqual({ inUse: 0, idle: 2, waiting: 0 });

  // The statement pool holds at most poolMax connections (1 here): a second statement waits for the first's.
  const slow = preparedRows(db, 'test_sleep', "select 'yes' as slept from pg_sleep($1::float8)", [0.2]);
  const queued = preparedRows<{ one: number }>(db, 'test_select_one', 'select $1::int as one', [2]);
  // pg-pool hands clients out on its next turn; the first statement then sleeps for 200 ms.
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(poolStats(db)).toEqual({ inUse: 1, idle: 1, waiting: 1 });
  expect(await queued).toEqual([{ one: 2 }]);
  expect(await slow).toEqual([{ slept: 'yes' }]);
  expect(poolStats(db)).toEqual({ inUse: 0, idle: 2, waiting: 0 });
});

test('destroying the Db closes the connections of its statement pool too', async () => {
  const connections = async () =>
    Number(
      (await db.raw<{ rows: Array<{ n: string }> }>('select count(*) as n from pg_stat_activity where datname = current_database()'))
        .rows[0]?.n,
    );
  const other = createDb({ databaseUrl: url }, { poolMax: 1 });
  const before = await connections();
  expect(await preparedRows(other, 'test_select_one', 'select $1::int as one', [3])).toEqual([{ one: 3 }]);
  expect(await connections()).toBe(before + 1);
  await other.destroy();
  for (let tries = 0; (await connections()) !== before && tries < 40; tries++) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(await connections()).toBe(before);
  // As Knex refuses a query after destroy, so does the statement pool (it is not opened again).
  await expect(preparedRows(other, 'test_select_one', 'select $1::int as one', [4])).rejects.toThrow('destroyed');
});

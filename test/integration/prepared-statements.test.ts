import { createDb, poolStats, preparedRows, type Db } from '../../src/db';
import { createTestDatabase } from '../helpers/test-app';

/**
 * The hot statements run as named prepared statements on pooled connections (issue 10). A migration run by another
 * instance (a rolling deploy) can change the shape of what such a statement returns; PostgreSQL then refuses the
 * cached plan (0A000), and the call must still succeed rather than fail every request on that connection.
 */
let db: Db;
let drop: () => Promise<void>;
beforeAll(async () => {
  const created = await createTestDatabase();
  drop = created.drop;
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

test('the Knex pool internals this server reads are where it reads them (db/index.ts: poolStats, acquire/release)', async () => {
  await db.raw('select 1');
  expect(poolStats(db)).toEqual({ inUse: 0, idle: 1, waiting: 0 });
  const connection = await db.client.acquireConnection();
  expect(poolStats(db)).toEqual({ inUse: 1, idle: 0, waiting: 0 });
  await db.client.releaseConnection(connection);
  expect(poolStats(db)).toEqual({ inUse: 0, idle: 1, waiting: 0 });
});

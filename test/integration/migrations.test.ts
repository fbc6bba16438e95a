import { randomBytes } from 'node:crypto';
import knexFactory, { type Knex } from 'knex';
import { migrationSource } from '../../migrations';

/**
 * Every migration can be undone and done again (issue 22): on a fresh, empty database, all of them up, then each
 * down() in turn to the empty schema, then each up() again; the schema at the end is the schema of the first run.
 */
let admin: Knex;
let db: Knex;
const name = `sso_mig_${randomBytes(6).toString('hex')}`;

beforeAll(async () => {
  const base = process.env.DATABASE_URL;
  if (!base) throw new Error('DATABASE_URL is set by the test setup');
  admin = knexFactory({ client: 'pg', connection: base, pool: { min: 0, max: 1 } });
  await admin.raw(`create database ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  db = knexFactory({ client: 'pg', connection: url.toString(), pool: { min: 0, max: 1 } });
});
afterAll(async () => {
  await db.destroy();
  await admin.raw(`drop database if exists ${name} with (force)`);
  await admin.destroy();
});

/** Tables with their columns and types, indexes, constraints, sequences, functions and triggers of the public schema. */
async function schemaOf(k: Knex): Promise<unknown> {
  const q = async (sql: string) => (await k.raw(sql)).rows as unknown[];
  return {
    columns: await q(`select table_name, column_name, data_type, is_nullable, column_default from information_schema.columns
                       where table_schema = 'public' and table_name not like 'knex_%' order by table_name, column_name`),
    indexes: await q(
      `select tablename, indexname, indexdef from pg_indexes where schemaname = 'public' and tablename not like 'knex_%' order by 1, 2`,
    ),
    constraints: await q(`select conrelid::regclass::text as tbl, conname, pg_get_constraintdef(oid) as def from pg_constraint
                           where connamespace = 'public'::regnamespace and conrelid::regclass::text not like 'knex_%' order by 1, 2`),
    sequences: await q(
      `select sequence_name from information_schema.sequences where sequence_schema = 'public' and sequence_name not like 'knex_%' order by 1`,
    ),
    functions: await q(`select proname from pg_proc where pronamespace = 'public'::regnamespace order by 1`),
    triggers: await q(`select event_object_table, trigger_name, action_statement from information_schema.triggers
                        where trigger_schema = 'public' order by 1, 2`),
  };
}

test('every down() and up() runs again on a fresh database, back to the same schema', async () => {
  const count = (await migrationSource.getMigrations([])).length;
  await db.migrate.latest({ migrationSource });
  const first = await schemaOf(db);
  expect((first as { columns: unknown[] }).columns.length).toBeGreaterThan(20);

  let undone = 0;
  for (;;) {
    const [, names] = (await db.migrate.down({ migrationSource })) as [number, string[]];
    if (names.length === 0) break;
    undone += names.length;
  }
  expect(undone).toBe(count);
  const empty = (await schemaOf(db)) as { columns: unknown[]; functions: unknown[]; sequences: unknown[] };
  expect(empty.columns).toEqual([]);
  expect(empty.sequences).toEqual([]);

  let redone = 0;
  for (;;) {
    const [, names] = (await db.migrate.up({ migrationSource })) as [number, string[]];
    if (names.length === 0) break;
    redone += names.length;
  }
  expect(redone).toBe(count);
  expect(await schemaOf(db)).toEqual(first);
});

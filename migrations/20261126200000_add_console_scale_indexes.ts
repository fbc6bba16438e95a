import type { Knex } from 'knex';

/**
 * Issue 23 "Scale": the indexes the console's lists need at 100,000 users and 1,000,000 audit events.
 *
 * - Users are listed newest first with a keyset cursor on (created_at, id): `users_created_at_id_idx` gives that
 *   order without sorting the table.
 * - The user search is a case-insensitive substring match on email and names. A pg_trgm GIN index on one expression
 *   holding all of them (`users_search_trgm_idx`) finds the candidates; the exact conditions re-check them
 *   (users.repo.ts). pg_trgm ships with PostgreSQL (contrib) and is a trusted extension (a database owner may create
 *   it). When it cannot be created, the migration goes on without that index and the search scans the table.
 * - Audit events are listed newest first by (occurred_at, id). Each filter the console and the API offer (actor,
 *   subject, type) gets an index that yields that order within its value, with the time range as its second column,
 *   so a filtered page, a date range and the next page are each one index range scan. They replace the (x, id)
 *   indexes of the audit table's first migration.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create index users_created_at_id_idx on users (created_at, id)');
  try {
    // A savepoint: a refused CREATE EXTENSION must not abort the migration's transaction.
    await knex.transaction(async (sp) => {
      await sp.raw('create extension if not exists pg_trgm');
    });
  } catch {
    // Not installed on this server and not installable by this role: the search works without the index.
  }
  // The operator class is named with the extension's schema: an operator may have installed it outside the path.
  const trgm = (await knex.raw(
    `select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm'`,
  )) as { rows: Array<{ schema: string }> };
  const schema = trgm.rows[0]?.schema;
  if (schema !== undefined) {
    await knex.raw(
      `create index users_search_trgm_idx on users using gin ((email || ' ' || first_name || ' ' || last_name) ??.gin_trgm_ops)`,
      [schema],
    );
  }

  await knex.raw('drop index audit_events_occurred_at_idx');
  await knex.raw('drop index audit_events_actor_idx');
  await knex.raw('drop index audit_events_subject_idx');
  await knex.raw('drop index audit_events_type_idx');
  await knex.raw('create index audit_events_time_idx on audit_events (occurred_at, id)');
  await knex.raw('create index audit_events_actor_time_idx on audit_events (actor_id, occurred_at, id)');
  await knex.raw('create index audit_events_subject_time_idx on audit_events (subject_id, occurred_at, id)');
  await knex.raw('create index audit_events_type_time_idx on audit_events (type, occurred_at, id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index audit_events_type_time_idx');
  await knex.raw('drop index audit_events_subject_time_idx');
  await knex.raw('drop index audit_events_actor_time_idx');
  await knex.raw('drop index audit_events_time_idx');
  await knex.raw('create index audit_events_occurred_at_idx on audit_events (occurred_at)');
  await knex.raw('create index audit_events_actor_idx on audit_events (actor_id, id)');
  await knex.raw('create index audit_events_subject_idx on audit_events (subject_id, id)');
  await knex.raw('create index audit_events_type_idx on audit_events (type, id)');

  await knex.raw('drop index if exists users_search_trgm_idx');
  await knex.raw('drop index users_created_at_id_idx');
  // The pg_trgm extension stays: it may have been there before, and other objects may use it.
}

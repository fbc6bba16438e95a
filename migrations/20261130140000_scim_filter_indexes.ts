import type { Knex } from 'knex';

/**
 * SCIM substring filters (docs/scim.md "Filters, paging and projection"): trigram indexes for the directory-side
 * values a filter compares, so that `co`, `sw` and `ew` (and `eq`) find candidates by index instead of scanning:
 * - `scim_users_user_name_trgm_idx`: a connection's own userName (`userName co "…"` when the directory's userName is
 *   not an email address); the account side is `users_search_trgm_idx` (email and names, an earlier migration).
 * - `scim_users_display_name_trgm_idx`: a connection's own displayName of an account (`displayName co "…"`).
 * - `scim_groups_display_name_trgm_idx`: a group's displayName.
 * Like the earlier migration, they are skipped when pg_trgm is not available (the filters then scan, with the same
 * results).
 */
export async function up(knex: Knex): Promise<void> {
  const trgm = (await knex.raw(
    `select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm'`,
  )) as { rows: Array<{ schema: string }> };
  const schema = trgm.rows[0]?.schema;
  if (schema === undefined) return;
  await knex.raw('create index scim_users_user_name_trgm_idx on scim_users using gin (lower(user_name) ??.gin_trgm_ops)', [schema]);
  await knex.raw('create index scim_users_display_name_trgm_idx on scim_users using gin (lower(display_name) ??.gin_trgm_ops)', [schema]);
  await knex.raw('create index scim_groups_display_name_trgm_idx on scim_groups using gin (lower(display_name) ??.gin_trgm_ops)', [schema]);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists scim_groups_display_name_trgm_idx');
  await knex.raw('drop index if exists scim_users_display_name_trgm_idx');
  await knex.raw('drop index if exists scim_users_user_name_trgm_idx');
}

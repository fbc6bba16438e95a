import type { Knex } from 'knex';

/**
 * CONTRACT §18: settings an administrator changes at runtime (src/services/settings/declarations.ts). One row per
 * setting that was ever stored (its JSON value); a setting without a row has its default. `settings_version` is bumped
 * by every change, in the change's transaction: each instance compares it with the version of its snapshot (the
 * fallback beside LISTEN/NOTIFY on `sso_settings`).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table settings (
      name text primary key,
      value jsonb not null,
      updated_at timestamptz not null,
      updated_by uuid references users(id) on delete set null
    )`);
  await knex.raw(`create table settings_version (id integer primary key check (id = 1), version bigint not null)`);
  await knex.raw(`insert into settings_version (id, version) values (1, 0)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table settings_version');
  await knex.raw('drop table settings');
}

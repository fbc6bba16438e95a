import type { Knex } from 'knex';

/**
 * The per-instance client cache (docs/performance.md, "client_credentials"): every instance keeps the clients it
 * authenticated in memory and drops them when it hears `sso_clients`. Any statement that writes `oauth_clients` or
 * `api_resources` (a client's allowed APIs are read with it) notifies that channel; PostgreSQL delivers the notification
 * when the writing transaction commits (never for one rolled back), to every instance at once. Statement triggers,
 * so a bulk change notifies once; TRUNCATE too.
 *
 * New functions and triggers only: safe on a database with data.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create function sso_clients_changed() returns trigger language plpgsql as $$
    begin
      perform pg_notify('sso_clients', '');
      return null;
    end
    $$`);
  for (const table of ['oauth_clients', 'api_resources']) {
    await knex.raw(`
      create trigger ${table}_notify after insert or update or delete or truncate on ${table}
      for each statement execute function sso_clients_changed()`);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['oauth_clients', 'api_resources']) await knex.raw(`drop trigger ${table}_notify on ${table}`);
  await knex.raw('drop function sso_clients_changed()');
}

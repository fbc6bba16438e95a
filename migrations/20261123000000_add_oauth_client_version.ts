import type { Knex } from 'knex';

/**
 * Issue 10: a version on every OAuth client, renewed by a trigger on every UPDATE of the row (the admin API's and any
 * operator's SQL alike). Versions come from one sequence, so they never repeat, not even for a row deleted and
 * inserted again under the same client_id. The token endpoint keeps the clients it authenticated in a per-instance cache and checks the
 * cached version inside the refresh rotation statement, so a rotated secret, changed scopes or a deactivation on any
 * instance applies to the very next refresh on every instance without a separate read of the client.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create sequence oauth_client_version_seq');
  await knex.raw("alter table oauth_clients add column version bigint not null default nextval('oauth_client_version_seq')");
  await knex.raw(`
    create function oauth_clients_bump_version() returns trigger language plpgsql as $$
    begin
      new.version := nextval('oauth_client_version_seq');
      return new;
    end
    $$`);
  await knex.raw(`
    create trigger oauth_clients_bump_version before update on oauth_clients
    for each row execute function oauth_clients_bump_version()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger oauth_clients_bump_version on oauth_clients');
  await knex.raw('drop function oauth_clients_bump_version()');
  await knex.raw('alter table oauth_clients drop column version');
  await knex.raw('drop sequence oauth_client_version_seq');
}

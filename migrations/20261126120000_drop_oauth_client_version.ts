import type { Knex } from 'knex';

/**
 * Issue 22: the per-instance OAuth client cache is gone (every token, revocation and introspection request reads the
 * client with one prepared statement), and with it the version that cached copies were checked against: its column,
 * sequence and trigger (migration 20261123000000). down() puts them back as that migration made them.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists oauth_clients_bump_version on oauth_clients');
  await knex.raw('drop function if exists oauth_clients_bump_version()');
  await knex.raw('alter table oauth_clients drop column if exists version');
  await knex.raw('drop sequence if exists oauth_client_version_seq');
}

export async function down(knex: Knex): Promise<void> {
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

import type { Knex } from 'knex';

/**
 * Issue 20 (CONTRACT §12): client types and grant types per client, API resources (RFC 8707), the resource asked for
 * at authorize, and the device authorization grant (RFC 8628). Every existing client becomes `confidential` with the
 * spec's two grants, so nothing changes for it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    "alter table oauth_clients add column type text not null default 'confidential' check (type in ('confidential', 'public'))",
  );
  await knex.raw(`alter table oauth_clients add column grant_types jsonb not null default '["authorization_code","refresh_token"]'`);
  await knex.raw("alter table oauth_clients add column allowed_resources jsonb not null default '[]'");
  // A public client has no secret (token_endpoint_auth_method none); a confidential one always has one.
  await knex.raw('alter table oauth_clients alter column secret_hash drop not null');
  await knex.raw("alter table oauth_clients add constraint oauth_clients_secret_by_type check ((type = 'public') = (secret_hash is null))");

  await knex.schema.createTable('api_resources', (t) => {
    t.uuid('id').primary();
    // RFC 8707 §2: an absolute URI, compared exactly; the `aud` of the tokens issued for it.
    t.text('identifier').notNullable().unique();
    t.text('name').notNullable();
    t.jsonb('scopes').notNullable().defaultTo('[]');
    t.integer('access_token_ttl_s').notNullable().defaultTo(3600);
    t.boolean('open_registration').notNullable().defaultTo(false);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.alterTable('oauth_authorization_requests', (t) => {
    t.text('resource');
  });
  await knex.schema.alterTable('oauth_codes', (t) => {
    t.text('resource');
  });

  await knex.schema.createTable('oauth_device_codes', (t) => {
    // SHA-256 of the device code (the poller's secret) and of the normalised user code: neither is stored plain.
    t.text('device_code_hash').primary();
    t.text('user_code_hash').notNullable().unique();
    t.text('client_id').notNullable().references('oauth_clients.client_id').onDelete('CASCADE');
    t.text('scope').notNullable();
    t.text('resource');
    // pending -> approved | denied; approved -> consumed (the tokens, exactly once).
    t.text('status').notNullable().defaultTo('pending');
    t.uuid('user_id').references('users.id').onDelete('CASCADE');
    t.timestamp('auth_time', { useTz: true });
    t.jsonb('amr');
    t.integer('interval_s').notNullable();
    t.timestamp('last_polled_at', { useTz: true });
    t.uuid('session_id');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.index(['expires_at']);
  });

  // RFC 8628 §5.1: wrong user codes are counted per browser session (a fixed one-minute window).
  await knex.schema.createTable('device_code_failures', (t) => {
    t.uuid('session_id').primary();
    t.integer('failures').notNullable();
    t.timestamp('window_start', { useTz: true }).notNullable();
    t.index(['window_start']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('device_code_failures');
  await knex.schema.dropTable('oauth_device_codes');
  await knex.schema.alterTable('oauth_codes', (t) => {
    t.dropColumn('resource');
  });
  await knex.schema.alterTable('oauth_authorization_requests', (t) => {
    t.dropColumn('resource');
  });
  await knex.schema.dropTable('api_resources');
  await knex.raw("delete from oauth_clients where type = 'public'");
  await knex.raw('alter table oauth_clients drop constraint oauth_clients_secret_by_type');
  await knex.raw('alter table oauth_clients alter column secret_hash set not null');
  await knex.raw('alter table oauth_clients drop column allowed_resources');
  await knex.raw('alter table oauth_clients drop column grant_types');
  await knex.raw('alter table oauth_clients drop column type');
}

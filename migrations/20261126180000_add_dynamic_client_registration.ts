import type { Knex } from 'knex';

/**
 * Issue 21 (CONTRACT §13): dynamic client registration (RFC 7591) and management (RFC 7592).
 * - oauth_clients learns how it was registered (`admin` for every existing client), the SHA-256 of its registration
 *   access token, the RFC 7591 `client_uri` and `logo_uri`, and when it was last used (a token issued), which the prune
 *   job reads to delete dynamic clients unused for 30 days.
 * - registration_tokens: the initial access tokens admins mint for CLIENT_REGISTRATION=token, stored as SHA-256, with
 *   an expiry and a use limit spent by one conditional UPDATE.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    "alter table oauth_clients add column registration text not null default 'admin' check (registration in ('admin', 'dynamic'))",
  );
  await knex.raw('alter table oauth_clients add column registration_access_token_hash text');
  await knex.raw('alter table oauth_clients add column client_uri text');
  await knex.raw('alter table oauth_clients add column logo_uri text');
  await knex.raw('alter table oauth_clients add column last_used_at timestamptz');
  // The prune job's scan: dynamic clients by their last sign-in (or creation, when never used).
  await knex.raw(
    "create index oauth_clients_dynamic_last_use on oauth_clients ((coalesce(last_used_at, created_at))) where registration = 'dynamic'",
  );

  await knex.schema.createTable('registration_tokens', (t) => {
    t.uuid('id').primary();
    t.text('token_hash').notNullable().unique();
    t.uuid('created_by').references('users.id').onDelete('SET NULL');
    t.integer('max_uses').notNullable();
    t.integer('uses').notNullable().defaultTo(0);
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('revoked_at', { useTz: true });
    t.index(['expires_at']);
  });
  await knex.raw('alter table registration_tokens add constraint registration_tokens_uses check (uses >= 0 and uses <= max_uses)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('registration_tokens');
  await knex.raw("delete from oauth_clients where registration = 'dynamic'");
  await knex.raw('drop index oauth_clients_dynamic_last_use');
  await knex.raw('alter table oauth_clients drop column last_used_at');
  await knex.raw('alter table oauth_clients drop column logo_uri');
  await knex.raw('alter table oauth_clients drop column client_uri');
  await knex.raw('alter table oauth_clients drop column registration_access_token_hash');
  await knex.raw('alter table oauth_clients drop column registration');
}

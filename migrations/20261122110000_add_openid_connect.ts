import type { Knex } from 'knex';

/**
 * OpenID Connect (CONTRACT §9): id_token signing keys, the OIDC parameters a pending authorization and a code carry
 * to the id_token (nonce, and when/how the user authenticated), and clients' post-logout redirect URIs.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('oidc_signing_keys', (t) => {
    t.text('kid').primary();
    t.text('alg').notNullable();
    t.jsonb('public_jwk').notNullable();
    // The private JWK, sealed with KEYS_SECRET (lib/sealed.ts); never stored in the clear.
    t.text('private_jwk_sealed').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // Set when a newer key replaced it; it is still published until the id_tokens it signed have expired.
    t.timestamp('retired_at', { useTz: true });
  });
  // One current key per algorithm: instances starting together cannot both create one (race-safe first start).
  await knex.raw('create unique index oidc_signing_keys_one_current on oidc_signing_keys (alg) where retired_at is null');

  await knex.schema.alterTable('oauth_authorization_requests', (t) => {
    t.text('nonce');
    t.timestamp('auth_time', { useTz: true });
    t.specificType('amr', 'text[]');
  });
  await knex.schema.alterTable('oauth_codes', (t) => {
    t.text('nonce');
    t.timestamp('auth_time', { useTz: true });
    t.specificType('amr', 'text[]');
  });
  await knex.schema.alterTable('oauth_clients', (t) => {
    t.jsonb('post_logout_redirect_uris').notNullable().defaultTo('[]');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oauth_clients', (t) => t.dropColumn('post_logout_redirect_uris'));
  for (const table of ['oauth_codes', 'oauth_authorization_requests']) {
    await knex.schema.alterTable(table, (t) => {
      t.dropColumn('amr');
      t.dropColumn('auth_time');
      t.dropColumn('nonce');
    });
  }
  await knex.schema.dropTableIfExists('oidc_signing_keys');
}

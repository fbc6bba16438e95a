import type { Knex } from 'knex';

/**
 * Issue 34, private_key_jwt (RFC 7523, OIDC Core §9): a confidential client may authenticate with a signed assertion
 * instead of a secret. `token_endpoint_auth_method` is null for every client before this (the method follows from the
 * type: client_secret_basic or none) and `private_key_jwt` for a client that proves itself with a key of its `jwks` or
 * `jwks_uri` (exactly one of them; such a client has no secret).
 *
 * `oauth_used_jtis` remembers every single-use identifier a client or a DPoP key has spent (an assertion's `jti`, a
 * DPoP proof's `jti`) until it could no longer be accepted anyway: the insert that spends one is the check
 * (primary key), so two concurrent uses end with exactly one accepted. `key` is a SHA-256 over what the identifier is
 * unique within (kind, client or key, jti); the prune job deletes rows past `expires_at` on its index.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    `alter table oauth_clients add column token_endpoint_auth_method text check (token_endpoint_auth_method in ('private_key_jwt'))`,
  );
  await knex.raw('alter table oauth_clients add column jwks jsonb');
  await knex.raw('alter table oauth_clients add column jwks_uri text');
  // A secret exactly for confidential clients that authenticate with one; a private_key_jwt client has keys instead.
  await knex.raw('alter table oauth_clients drop constraint oauth_clients_secret_by_type');
  await knex.raw(
    `alter table oauth_clients add constraint oauth_clients_secret_by_type
       check ((type = 'confidential' and token_endpoint_auth_method is null) = (secret_hash is not null))`,
  );
  await knex.raw(
    `alter table oauth_clients add constraint oauth_clients_keys_by_method
       check ((token_endpoint_auth_method = 'private_key_jwt') = (jwks is not null or jwks_uri is not null)
              and not (jwks is not null and jwks_uri is not null)
              and (token_endpoint_auth_method is null or type = 'confidential'))`,
  );
  await knex.raw(`create table oauth_used_jtis (key text primary key, expires_at timestamptz not null)`);
  await knex.raw('create index oauth_used_jtis_expires_at_idx on oauth_used_jtis (expires_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table oauth_used_jtis');
  await knex.raw(`delete from oauth_clients where token_endpoint_auth_method = 'private_key_jwt'`);
  await knex.raw('alter table oauth_clients drop constraint oauth_clients_keys_by_method');
  await knex.raw('alter table oauth_clients drop constraint oauth_clients_secret_by_type');
  await knex.raw("alter table oauth_clients add constraint oauth_clients_secret_by_type check ((type = 'public') = (secret_hash is null))");
  await knex.raw('alter table oauth_clients drop column jwks_uri');
  await knex.raw('alter table oauth_clients drop column jwks');
  await knex.raw('alter table oauth_clients drop column token_endpoint_auth_method');
}

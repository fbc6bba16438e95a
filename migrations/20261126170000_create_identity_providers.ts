import type { Knex } from 'knex';

/**
 * CONTRACT §16: signing in with other identity providers.
 * - identity_providers: what admins configure; the client secret only sealed (lib/sealed.ts, KEYS_SECRET).
 * - user_identities: an upstream account (provider, subject) linked to a local user.
 * - idp_flows: the browser round trip to a provider (state, nonce, PKCE verifier), single use, 10 minutes, bound to
 *   the browser by the hash of a cookie; consumed with one conditional UPDATE.
 * - idp_pending_links: an upstream identity waiting for the person to prove the local account it will be linked to.
 * - mfa_tokens.first_factor: the amr value of the first step ('pwd' when null), so that the second step of an
 *   upstream sign-in says ["fed", "otp"].
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table identity_providers (
      id uuid primary key,
      slug text not null unique,
      name text not null,
      type text not null check (type in ('oidc', 'github')),
      issuer text,
      base_url text,
      api_base_url text,
      client_id text not null,
      client_secret_sealed text,
      scopes text not null,
      enabled boolean not null default true,
      trust_email boolean not null default false,
      allow_signup boolean not null default true,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`);
  await knex.raw(`
    create table user_identities (
      id uuid primary key,
      user_id uuid not null references users(id) on delete cascade,
      provider_id uuid not null references identity_providers(id) on delete cascade,
      subject text not null,
      email text,
      created_at timestamptz not null default now(),
      last_used_at timestamptz,
      unique (provider_id, subject)
    )`);
  await knex.raw('create index user_identities_user_id_idx on user_identities (user_id)');
  await knex.raw(`
    create table idp_flows (
      state_hash text primary key,
      browser_hash text not null,
      provider_id uuid not null references identity_providers(id) on delete cascade,
      code_verifier_sealed text not null,
      nonce text not null,
      return_to text,
      link_user_id uuid references users(id) on delete cascade,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      used_at timestamptz
    )`);
  await knex.raw('create index idp_flows_expires_at_idx on idp_flows (expires_at)');
  await knex.raw(`
    create table idp_pending_links (
      token_hash text primary key,
      user_id uuid not null references users(id) on delete cascade,
      provider_id uuid not null references identity_providers(id) on delete cascade,
      subject text not null,
      email text,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      used_at timestamptz
    )`);
  await knex.raw('create index idp_pending_links_expires_at_idx on idp_pending_links (expires_at)');
  await knex.raw('alter table mfa_tokens add column first_factor text');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table mfa_tokens drop column first_factor');
  await knex.raw('drop table idp_pending_links');
  await knex.raw('drop table idp_flows');
  await knex.raw('drop table user_identities');
  await knex.raw('drop table identity_providers');
}

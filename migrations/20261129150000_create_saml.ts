import type { Knex } from 'knex';

/**
 * CONTRACT §19: the SAML 2.0 identity provider.
 * - saml_signing_keys: the IdP's RSA-2048 key (sealed with KEYS_SECRET, lib/sealed.ts) and its self-signed
 *   certificate; one current key (retired_at null, a partial unique index), retired ones stay published a while.
 * - saml_apps: the registered service providers.
 * - saml_requests: an AuthnRequest (or an IdP-initiated start) waiting for the person to sign in; single use
 *   (used_at set by one conditional UPDATE), and (app, request id) unique so a replayed AuthnRequest ID is refused.
 * - saml_sessions: what an assertion was issued for (SessionIndex -> the SSO session), for single logout and the
 *   user's connected apps.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table saml_signing_keys (
      id uuid primary key,
      private_key_sealed text not null,
      certificate_pem text not null,
      created_at timestamptz not null default now(),
      retired_at timestamptz
    )`);
  await knex.raw('create unique index saml_signing_keys_one_current on saml_signing_keys ((true)) where retired_at is null');
  await knex.raw(`
    create table saml_apps (
      id uuid primary key,
      name text not null,
      entity_id text not null unique,
      acs_urls jsonb not null,
      slo_url text,
      slo_binding text not null default 'HTTP-Redirect' check (slo_binding in ('HTTP-Redirect', 'HTTP-POST')),
      name_id_format text not null check (name_id_format in ('emailAddress', 'persistent', 'transient', 'unspecified')),
      attributes jsonb not null,
      sign_response boolean not null default true,
      sign_assertion boolean not null default true,
      encrypt_assertion boolean not null default false,
      want_authn_requests_signed boolean not null default false,
      sp_certificate text,
      enabled boolean not null default true,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`);
  await knex.raw(`
    create table saml_requests (
      id text primary key,
      app_id uuid not null references saml_apps(id) on delete cascade,
      request_id text,
      acs_url text not null,
      relay_state text,
      force_authn boolean not null default false,
      is_passive boolean not null default false,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      used_at timestamptz,
      unique (app_id, request_id)
    )`);
  await knex.raw('create index saml_requests_expires_at_idx on saml_requests (expires_at)');
  await knex.raw(`
    create table saml_sessions (
      session_index text primary key,
      session_id uuid not null references sessions(id) on delete cascade,
      app_id uuid not null references saml_apps(id) on delete cascade,
      user_id uuid not null references users(id) on delete cascade,
      name_id text not null,
      created_at timestamptz not null default now(),
      ended_at timestamptz
    )`);
  await knex.raw('create index saml_sessions_user_idx on saml_sessions (user_id, app_id)');
  await knex.raw('create index saml_sessions_session_idx on saml_sessions (session_id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists saml_sessions');
  await knex.raw('drop table if exists saml_requests');
  await knex.raw('drop table if exists saml_apps');
  await knex.raw('drop table if exists saml_signing_keys');
}

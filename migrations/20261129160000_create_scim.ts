import type { Knex } from 'knex';

/**
 * CONTRACT §20 (docs/scim.md): SCIM 2.0 provisioning.
 * - `scim_connections`: one per directory (Entra ID, Okta, …); only the SHA-256 of its bearer token is stored.
 * - `scim_users`: what a connection knows of an account beyond the account itself (its `externalId`, its `userName`
 *   when that is not an email address, its `displayName` and the enterprise extension), one row per (connection,
 *   account); the account is the `users` row.
 * - `scim_groups`, `scim_group_members`: the groups a connection pushes, and their members (accounts).
 * - `scim_group_roles`: the roles an administrator mapped a group to; membership grants them while it lasts (the live
 *   permission lookup reads them, src/db/repositories/principal.repo.ts). super_admin is refused by the service.
 * - `audit_events.actor_type` / `actor_name`: an actor that is not a user (`scim_connection`), named as it was then.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table scim_connections (
      id uuid primary key,
      name text not null,
      description text not null default '',
      token_hash text not null unique,
      created_by uuid references users(id) on delete set null,
      created_at timestamptz not null,
      last_used_at timestamptz
    )`);
  await knex.raw(`
    create table scim_users (
      connection_id uuid not null references scim_connections(id) on delete cascade,
      user_id uuid not null references users(id) on delete cascade,
      external_id text,
      user_name text,
      display_name text,
      enterprise jsonb,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      primary key (connection_id, user_id),
      unique (connection_id, external_id),
      unique (connection_id, user_name)
    )`);
  await knex.raw('create index scim_users_user_idx on scim_users (user_id)');
  // `userName eq "…"` for a directory whose userName is not an email address (case-insensitive, RFC 7643).
  await knex.raw('create index scim_users_user_name_idx on scim_users (connection_id, lower(user_name))');
  await knex.raw(`
    create table scim_groups (
      id uuid primary key,
      connection_id uuid not null references scim_connections(id) on delete cascade,
      display_name text not null,
      external_id text,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      unique (connection_id, external_id)
    )`);
  await knex.raw('create index scim_groups_connection_name_idx on scim_groups (connection_id, lower(display_name))');
  await knex.raw(`
    create table scim_group_members (
      group_id uuid not null references scim_groups(id) on delete cascade,
      user_id uuid not null references users(id) on delete cascade,
      primary key (group_id, user_id)
    )`);
  await knex.raw('create index scim_group_members_user_idx on scim_group_members (user_id)');
  await knex.raw(`
    create table scim_group_roles (
      group_id uuid not null references scim_groups(id) on delete cascade,
      role_id uuid not null references roles(id) on delete cascade,
      primary key (group_id, role_id)
    )`);
  await knex.raw('create index scim_group_roles_role_idx on scim_group_roles (role_id)');
  await knex.raw(`alter table audit_events add column actor_type text, add column actor_name text`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table audit_events drop column actor_type, drop column actor_name');
  await knex.raw('drop table scim_group_roles');
  await knex.raw('drop table scim_group_members');
  await knex.raw('drop table scim_groups');
  await knex.raw('drop table scim_users');
  await knex.raw('drop table scim_connections');
}

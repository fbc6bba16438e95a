import type { Knex } from 'knex';

/**
 * Roles carry API permissions (docs/rbac.md, "Roles that grant API scopes"):
 * - `role_api_scopes`: the scopes of API resources a role grants, one row per (role, resource, scope); gone with the
 *   role's resource (a scope the resource no longer defines is ignored where it is read).
 * - `api_resources.role_based_access`: a user-delegated token for such a resource carries only the requested scopes
 *   that the user's active roles grant for it (docs/apps.md); false keeps the resource as before.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table api_resources add column role_based_access boolean not null default false`);
  await knex.raw(`
    create table role_api_scopes (
      role_id uuid not null references roles (id) on delete cascade,
      resource_id uuid not null references api_resources (id) on delete cascade,
      scope text not null,
      primary key (role_id, resource_id, scope)
    )`);
  await knex.raw(`create index role_api_scopes_resource_idx on role_api_scopes (resource_id)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`drop table role_api_scopes`);
  await knex.raw(`alter table api_resources drop column role_based_access`);
}

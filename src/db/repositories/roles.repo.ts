import type { Knex } from 'knex';
import type { DbOrTrx } from '..';
import { UUID_PATTERN } from '../../lib/ids';
import { date, rowMapper, same, type RecordOf, type RowOf } from '../rows';
import { heldRolesSql } from './principal.repo';

export interface RoleApiScope {
  resource: string;
  scope: string;
}

/** The columns of selectRoles: the role and its permissions and API scopes as json arrays (pg parses json). */
const roleColumns = {
  id: same<string>(),
  name: same<string>(),
  description: same<string>(),
  /** null = a global role. */
  application: same<string | null>(),
  /** Sorted; every catalogue permission for the global super_admin (CONTRACT §6). */
  permissions: same<string[]>(),
  /** Scopes of API resources the role grants (resource = its identifier), sorted; only scopes the resource still defines. */
  apiScopes: same<RoleApiScope[]>(),
  isActive: same<boolean>(),
  createdAt: date,
  updatedAt: date,
};

export type RoleRow = RowOf<typeof roleColumns>;
type RoleRecord = RecordOf<typeof roleColumns>;
const toRoleRow = rowMapper(roleColumns);

export interface PermissionRow {
  name: string;
  description: string;
}
/**
 * Roles with their permissions in one statement. The global super_admin is shown with the whole catalogue, the
 * same rule loadUserAccess applies (CONTRACT §6: super_admin holds every permission).
 */
function selectRoles(db: DbOrTrx): Knex.QueryBuilder<RoleRecord, RoleRecord[]> {
  return db('roles as ro').select(
    'ro.id',
    'ro.name',
    'ro.description',
    'ro.application',
    'ro.is_active',
    'ro.created_at',
    'ro.updated_at',
    db.raw(
      `case when ro.name = 'super_admin' and ro.application is null
            then coalesce((select json_agg(p.name order by p.name) from permissions p), '[]'::json)
            else coalesce((select json_agg(rp.permission order by rp.permission)
                             from role_permissions rp where rp.role_id = ro.id), '[]'::json)
       end as permissions`,
    ),
    db.raw(
      `coalesce((select json_agg(json_build_object('resource', ar.identifier, 'scope', ras.scope) order by ar.identifier, ras.scope)
                   from role_api_scopes ras join api_resources ar on ar.id = ras.resource_id
                  where ras.role_id = ro.id and ar.scopes @> jsonb_build_array(ras.scope)), '[]'::json) as api_scopes`,
    ),
  );
}

/** Every role, global first, then by application and name; `activeOnly` drops deactivated ones. */
export async function listRoles(db: DbOrTrx, filter: { activeOnly?: boolean } = {}): Promise<RoleRow[]> {
  const q = selectRoles(db).orderByRaw('ro.application nulls first, ro.name');
  if (filter.activeOnly) q.where('ro.is_active', true);
  const rows = await q;
  return rows.map(toRoleRow);
}

export async function findRoleById(db: DbOrTrx, id: string): Promise<RoleRow | undefined> {
  if (!UUID_PATTERN.test(id)) return undefined;
  const row = await selectRoles(db).where('ro.id', id).first();
  return row ? toRoleRow(row) : undefined;
}

/** The roles assigned to a user, deactivated ones included (they grant nothing while inactive). */
export async function listRolesOfUser(db: DbOrTrx, userId: string): Promise<RoleRow[]> {
  const rows: RoleRecord[] = await selectRoles(db)
    .join('user_roles as ur', 'ur.role_id', 'ro.id')
    .where('ur.user_id', userId)
    .orderByRaw('ro.application nulls first, ro.name');
  return rows.map(toRoleRow);
}

/** A role an account holds, and how: assigned to it, and/or granted by the SCIM groups it is a member of. */
export interface HeldRoleRow extends RoleRow {
  assigned: boolean;
  scimGroups: Array<{ id: string; displayName: string; connectionId: string }>;
}

/** The columns of listRolesHeldByUser: a role, and how the account holds it (the groups as a json array). */
interface HeldRoleRecord extends RoleRecord {
  assigned: boolean;
  scim_groups: HeldRoleRow['scimGroups'];
}

/**
 * Every role the user holds by the one rule of principal.repo.ts heldRolesSql (assigned, or granted by membership of a
 * SCIM group mapped to it), deactivated roles included: what judges whether an account is privileged (automatic
 * linking, taking an account over) must count a role that reactivating would hand back; `GET /api/users/:id/roles`
 * shows each with how it is held.
 */
export async function listRolesHeldByUser(db: DbOrTrx, userId: string): Promise<HeldRoleRow[]> {
  const held: Knex.QueryBuilder<HeldRoleRecord, HeldRoleRecord[]> = selectRoles(db)
    .select(
      db.raw('bool_or(held.group_id is null) as assigned'),
      db.raw(
        `coalesce(json_agg(json_build_object('id', g.id, 'displayName', g.display_name, 'connectionId', g.connection_id)
                           order by g.display_name, g.id) filter (where g.id is not null), '[]'::json) as scim_groups`,
      ),
    )
    .join(db.raw(`(${heldRolesSql('?')}) as held`, [userId, userId]), 'held.role_id', 'ro.id')
    .leftJoin('scim_groups as g', 'g.id', 'held.group_id')
    .groupBy('ro.id')
    .orderByRaw('ro.application nulls first, ro.name');
  const rows = await held;
  return rows.map((r) => ({ ...toRoleRow(r), assigned: r.assigned, scimGroups: r.scim_groups }));
}

/** `application` null = the global role of that name. */
export async function findRoleByName(db: DbOrTrx, name: string, application: string | null): Promise<RoleRow | undefined> {
  const q = selectRoles(db).where('ro.name', name);
  if (application === null) q.whereNull('ro.application');
  else q.where('ro.application', application);
  const row = await q.first();
  return row ? toRoleRow(row) : undefined;
}

/** Unique violation `roles_name_application_unique` when the name is taken in that application. */
export async function insertRole(
  db: DbOrTrx,
  role: { id: string; name: string; description: string; application: string | null; now: Date },
): Promise<void> {
  await db('roles').insert({
    id: role.id,
    name: role.name,
    description: role.description,
    application: role.application,
    is_active: true,
    created_at: role.now,
    updated_at: role.now,
  });
}

/** Returns whether the role exists. */
export async function updateRole(
  db: DbOrTrx,
  id: string,
  patch: Partial<{ name: string; description: string; application: string; isActive: boolean }>,
  now: Date,
): Promise<boolean> {
  const record: Record<string, unknown> = { updated_at: now };
  if (patch.name !== undefined) record.name = patch.name;
  if (patch.application !== undefined) record.application = patch.application;
  if (patch.description !== undefined) record.description = patch.description;
  if (patch.isActive !== undefined) record.is_active = patch.isActive;
  const n = await db('roles').where({ id }).update(record);
  return n > 0;
}

/** Replaces the role's permission set. */
export async function setRolePermissions(db: DbOrTrx, roleId: string, permissions: string[]): Promise<void> {
  await db('role_permissions').where({ role_id: roleId }).delete();
  if (permissions.length > 0) {
    await db('role_permissions').insert(permissions.map((permission) => ({ role_id: roleId, permission })));
  }
}

/** Replaces the role's API scopes (resource ids, each scope one the resource defines: checked by the caller). */
export async function setRoleApiScopes(db: DbOrTrx, roleId: string, scopes: Array<{ resourceId: string; scope: string }>): Promise<void> {
  await db('role_api_scopes').where({ role_id: roleId }).delete();
  if (scopes.length > 0) {
    await db('role_api_scopes').insert(scopes.map((s) => ({ role_id: roleId, resource_id: s.resourceId, scope: s.scope })));
  }
}

/**
 * The scopes of API resource `resourceId` that the active roles user `userId` holds (heldRolesSql: assigned or through
 * a SCIM group) grant to client `clientId`: global roles, and roles scoped to that application (its client_id).
 */
export async function scopesGrantedByRoles(db: DbOrTrx, userId: string, resourceId: string, clientId: string): Promise<string[]> {
  const rows: Array<{ scope: string }> = await db
    .select('ras.scope')
    .distinct()
    .from('role_api_scopes as ras')
    .join('roles as ro', 'ro.id', 'ras.role_id')
    .join(db.raw(`(${heldRolesSql('?')}) as held`, [userId, userId]), 'held.role_id', 'ro.id')
    .where('ras.resource_id', resourceId)
    .where('ro.is_active', true)
    .where((w) => w.whereNull('ro.application').orWhere('ro.application', clientId));
  return rows.map((r) => r.scope);
}

/** An API scope an account holds through one of its roles: for every application (`application` null) or one. */
export interface HeldApiScopeRow {
  resource: string;
  scope: string;
  application: string | null;
}

/**
 * The API scopes the active roles user `userId` holds (heldRolesSql: assigned or through a SCIM group) grant, each with
 * the application its role is scoped to (null: a global role, which grants it to every application): what the user
 * may hand out by granting a role (rbac-policy mayHandOutRole). Only scopes the resource still defines count.
 */
export async function listApiScopesHeldByUser(db: DbOrTrx, userId: string): Promise<HeldApiScopeRow[]> {
  const rows: Array<{ resource: string; scope: string; application: string | null }> = await db
    .select('ar.identifier as resource', 'ras.scope', 'ro.application')
    .distinct()
    .from('role_api_scopes as ras')
    .join('api_resources as ar', 'ar.id', 'ras.resource_id')
    .join('roles as ro', 'ro.id', 'ras.role_id')
    .join(db.raw(`(${heldRolesSql('?')}) as held`, [userId, userId]), 'held.role_id', 'ro.id')
    .where('ro.is_active', true)
    .whereRaw('ar.scopes @> jsonb_build_array(ras.scope)');
  return rows.map((r) => ({ resource: r.resource, scope: r.scope, application: r.application }));
}

/**
 * Takes a row lock on the global super_admin role for the rest of the transaction. Every change that can take
 * super_admin away from someone takes it first, so two concurrent requests cannot both remove "one of the two
 * remaining" super_admins.
 */
export async function lockSuperAdminRole(trx: DbOrTrx): Promise<void> {
  await trx('roles').where({ name: 'super_admin' }).whereNull('application').forUpdate().first('id');
}

export async function countActiveRoles(db: DbOrTrx): Promise<number> {
  const row = await db('roles').where({ is_active: true }).count<{ count: string }[]>('* as count').first();
  return Number(row?.count ?? 0);
}

/** The permission catalogue of spec §2.9 (the seeded `permissions` table). */
export async function listPermissions(db: DbOrTrx): Promise<PermissionRow[]> {
  return db('permissions').select('name', 'description').orderBy('name');
}

import { randomUUID } from 'node:crypto';
import { withTransaction, type DbOrTrx } from '../db';
import { mapDbError } from '../db/pg-errors';
import {
  findRoleById,
  insertRole,
  listPermissions,
  listRoles as listRoleRows,
  setRolePermissions,
  updateRole as updateRoleRow,
  type PermissionRow,
  type RoleRow,
} from '../db/repositories/roles.repo';
import { badRequest, notFound } from '../errors';
import type { ServiceContext } from './context';
import { enforce, mayUpdateRole } from './rbac-policy';

/** The role catalogue (spec §4.5): the permission list and the roles, global and application-scoped. */

const ROLE_NAME_TAKEN = 'A role with this name already exists in this application';

export async function roleOr404(db: DbOrTrx, roleId: string): Promise<RoleRow> {
  const role = await findRoleById(db, roleId);
  if (!role) throw notFound('Role');
  return role;
}

async function assertKnownPermissions(db: DbOrTrx, permissions: string[]): Promise<void> {
  const catalogue = new Set((await listPermissions(db)).map((p) => p.name));
  const unknown = permissions.filter((p) => !catalogue.has(p));
  if (unknown.length > 0) {
    throw badRequest(
      'Unknown permission',
      unknown.map((p) => ({ path: 'permissions', message: `${p} is not in the permission catalogue` })),
    );
  }
}

export async function listPermissionCatalogue(ctx: ServiceContext): Promise<PermissionRow[]> {
  return listPermissions(ctx.db);
}

/** Global and application-scoped roles alike (spec §4.5). */
export async function listRoles(ctx: ServiceContext, filter: { activeOnly?: boolean } = {}): Promise<RoleRow[]> {
  return listRoleRows(ctx.db, filter);
}

export async function createRole(
  ctx: ServiceContext,
  input: { name: string; description?: string; application?: string | null; permissions?: string[] },
): Promise<RoleRow> {
  const permissions = [...new Set(input.permissions ?? [])];
  await assertKnownPermissions(ctx.db, permissions);
  const id = randomUUID();
  let role: RoleRow;
  try {
    role = await withTransaction(ctx.db, async (trx) => {
      await insertRole(trx, {
        id,
        name: input.name,
        description: input.description ?? '',
        application: input.application ?? null,
        now: ctx.clock.now(),
      });
      await setRolePermissions(trx, id, permissions);
      const created = await roleOr404(trx, id);
      await ctx.events.record(trx, {
        type: 'role.created',
        subjectId: created.id,
        detail: { name: created.name, application: created.application, permissions },
      });
      return created;
    });
  } catch (err) {
    throw mapDbError(err, ROLE_NAME_TAKEN);
  }
  return role;
}

/**
 * Name, description, permissions and is_active can change; the application a role is scoped to is fixed at
 * creation. The built-in global roles keep their names, and super_admin keeps every permission and stays active.
 */
export async function updateRole(
  ctx: ServiceContext,
  roleId: string,
  patch: { name?: string; description?: string; permissions?: string[]; isActive?: boolean },
): Promise<RoleRow> {
  const permissions = patch.permissions ? [...new Set(patch.permissions)] : undefined;
  if (permissions) await assertKnownPermissions(ctx.db, permissions);
  let updated: RoleRow;
  try {
    updated = await withTransaction(ctx.db, async (trx) => {
      const role = await roleOr404(trx, roleId);
      enforce(mayUpdateRole(role, { ...patch, permissions }));
      await updateRoleRow(trx, roleId, { name: patch.name, description: patch.description, isActive: patch.isActive }, ctx.clock.now());
      if (permissions) await setRolePermissions(trx, roleId, permissions);
      const changed = await roleOr404(trx, roleId);
      const fields = Object.entries(patch)
        .filter(([, value]) => value !== undefined)
        .map(([key]) => key);
      const detail = { name: changed.name, fields, ...(permissions ? { permissions } : {}) };
      await ctx.events.record(trx, { type: 'role.changed', subjectId: roleId, detail });
      return changed;
    });
  } catch (err) {
    throw mapDbError(err, ROLE_NAME_TAKEN);
  }
  return updated;
}

/**
 * Roles are deactivated, never deleted (spec §2.9): assignments stay, but grant nothing from the next request on,
 * because permissions are resolved live.
 */
export async function deactivateRole(ctx: ServiceContext, roleId: string): Promise<RoleRow> {
  return updateRole(ctx, roleId, { isActive: false });
}

import { say } from '../i18n';
import { randomUUID } from 'node:crypto';
import { withTransaction, type DbOrTrx } from '../db';
import { mapDbError } from '../db/pg-errors';
import {
  findRoleById,
  insertRole,
  listPermissions,
  listRoles as listRoleRows,
  setRoleApiScopes,
  setRolePermissions,
  updateRole as updateRoleRow,
  type PermissionRow,
  type RoleRow,
} from '../db/repositories/roles.repo';
import { findApiResourceByIdentifier } from '../db/repositories/api-resources.repo';
import { badRequest, type ErrorDetail, found } from '../errors';
import type { ServiceContext } from './context';
import { enforce, mayUpdateRole } from './rbac-policy';

/** The role catalogue (spec §4.5): the permission list and the roles, global and application-scoped. */

const ROLE_NAME_TAKEN = say('roleNameTaken');

export async function roleOr404(db: DbOrTrx, roleId: string): Promise<RoleRow> {
  return found(await findRoleById(db, roleId), 'Role');
}

async function assertKnownPermissions(db: DbOrTrx, permissions: string[]): Promise<void> {
  const catalogue = new Set((await listPermissions(db)).map((p) => p.name));
  const unknown = permissions.filter((p) => !catalogue.has(p));
  if (unknown.length > 0) {
    throw badRequest(
      'Unknown permission',
      unknown.map((permission) => ({ path: 'permissions', ...say('permissionUnknown', { permission }) })),
    );
  }
}

/** A scope of an API resource a role grants (`resource` = the resource's identifier). */
export interface ApiScopeRef {
  resource: string;
  scope: string;
}

/**
 * The API scopes as rows to store: each resource must be registered and each scope one it defines, else 400 naming
 * the entry (`api_scopes[2].scope`). Duplicates are kept once.
 */
async function resolveApiScopes(db: DbOrTrx, refs: ApiScopeRef[]): Promise<Array<{ resourceId: string; scope: string }>> {
  const problems: ErrorDetail[] = [];
  const rows = new Map<string, { resourceId: string; scope: string }>();
  const resources = new Map<string, Awaited<ReturnType<typeof findApiResourceByIdentifier>>>();
  for (const [i, ref] of refs.entries()) {
    if (!resources.has(ref.resource)) resources.set(ref.resource, await findApiResourceByIdentifier(db, ref.resource));
    const resource = resources.get(ref.resource);
    if (!resource) {
      problems.push({ path: `api_scopes[${i}].resource`, ...say('resourceNotRegistered', { identifier: ref.resource }) });
    } else if (!resource.scopes.includes(ref.scope)) {
      problems.push({ path: `api_scopes[${i}].scope`, ...say('scopeNotOfResource', { scope: ref.scope, identifier: ref.resource }) });
    } else {
      rows.set(`${resource.id} ${ref.scope}`, { resourceId: resource.id, scope: ref.scope });
    }
  }
  if (problems.length > 0) throw badRequest('Unknown API resource or scope', problems);
  return [...rows.values()];
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
  input: { name: string; description?: string; application?: string | null; permissions?: string[]; apiScopes?: ApiScopeRef[] },
): Promise<RoleRow> {
  const permissions = [...new Set(input.permissions ?? [])];
  await assertKnownPermissions(ctx.db, permissions);
  const apiScopes = await resolveApiScopes(ctx.db, input.apiScopes ?? []);
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
      await setRoleApiScopes(trx, id, apiScopes);
      const created = await roleOr404(trx, id);
      await ctx.events.record(trx, {
        type: 'role.created',
        subjectId: created.id,
        detail: {
          name: created.name,
          application: created.application,
          permissions,
          ...(apiScopes.length ? { api_scopes: created.apiScopes.map((a) => `${a.resource} ${a.scope}`) } : {}),
        },
      });
      return created;
    });
  } catch (err) {
    throw mapDbError(err, ROLE_NAME_TAKEN);
  }
  return role;
}

/**
 * Name, description, permissions and is_active can change; an application-scoped role may be re-pointed at another
 * application (a role created with a free-text name is fixed this way), but a global role stays global. The built-in
 * global roles keep their names, and super_admin keeps every permission and stays active.
 */
export async function updateRole(
  ctx: ServiceContext,
  roleId: string,
  patch: {
    name?: string;
    description?: string;
    application?: string | null;
    permissions?: string[];
    apiScopes?: ApiScopeRef[];
    isActive?: boolean;
  },
): Promise<RoleRow> {
  const permissions = patch.permissions ? [...new Set(patch.permissions)] : undefined;
  if (permissions) await assertKnownPermissions(ctx.db, permissions);
  const apiScopes = patch.apiScopes ? await resolveApiScopes(ctx.db, patch.apiScopes) : undefined;
  let updated: RoleRow;
  try {
    updated = await withTransaction(ctx.db, async (trx) => {
      const role = await roleOr404(trx, roleId);
      enforce(mayUpdateRole(role, { ...patch, permissions }));
      const application = patch.application ?? undefined;
      await updateRoleRow(
        trx,
        roleId,
        { name: patch.name, description: patch.description, application, isActive: patch.isActive },
        ctx.clock.now(),
      );
      if (permissions) await setRolePermissions(trx, roleId, permissions);
      if (apiScopes) await setRoleApiScopes(trx, roleId, apiScopes);
      const changed = await roleOr404(trx, roleId);
      const fields = Object.entries(patch)
        .filter(([, value]) => value !== undefined)
        .map(([key]) => (key === 'apiScopes' ? 'api_scopes' : key === 'isActive' ? 'is_active' : key));
      const detail = {
        name: changed.name,
        fields,
        ...(patch.application !== undefined ? { application: changed.application } : {}),
        ...(permissions ? { permissions } : {}),
        ...(apiScopes ? { api_scopes: changed.apiScopes.map((a) => `${a.resource} ${a.scope}`) } : {}),
      };
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

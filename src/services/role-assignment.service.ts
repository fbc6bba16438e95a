import { withTransaction, type DbOrTrx } from '../db';
import { loadUserAccess, type PrincipalRole } from '../db/repositories/principal.repo';
import {
  findRoleById,
  findRoleByName,
  listApiScopesHeldByUser,
  listRoles,
  listRolesHeldByUser,
  listRolesOfUser,
  lockSuperAdminRole,
  type HeldRoleRow,
  type RoleRow,
} from '../db/repositories/roles.repo';
import {
  assignRoleToUser,
  countUsersWithGlobalRoles,
  listActiveRolesOfUsers,
  listUsersWithGlobalRoles,
  removeRoleFromUser,
} from '../db/repositories/user-roles.repo';
import { findUserById, type UserRow } from '../db/repositories/users.repo';
import { conflict, found, notFound } from '../errors';
import type { ServiceContext } from './context';
import { globalRoleNames } from './principal';
import {
  ADMIN_TIER,
  enforce,
  hasPermission,
  mayGrantRole,
  mayHandOutRole,
  mayManageUser,
  mayRemoveRole,
  mayTakeOverUser,
  SUPER_ADMIN,
  type Actor,
  type Granter,
} from './rbac-policy';
import { roleOr404 } from './role-catalogue.service';
import { say } from '../i18n';

/** Who holds which role (spec §4.4-4.5): assignments, resolved access, the admin list. The rules are rbac-policy's. */

/** A role named by id, or by name within an application (null: global). */
export type RoleRef = { roleId: string } | { role: string; application: string | null };

export interface UserWithRoles {
  user: UserRow;
  roles: PrincipalRole[];
}

async function userOr404(db: DbOrTrx, userId: string): Promise<UserRow> {
  return found(await findUserById(db, userId), 'User');
}

/** 403 unless the actor may change this account (its live roles and permissions, read in `db`). */
export async function assertMayManageUser(db: DbOrTrx, actor: Actor, userId: string): Promise<Awaited<ReturnType<typeof loadUserAccess>>> {
  const access = await loadUserAccess(db, userId);
  enforce(mayManageUser(actor, access));
  return access;
}

/**
 * CONTRACT §8 take-over rule against every role the account holds (assigned or through a SCIM group, deactivated
 * too). Call inside the transaction making the change.
 */
export async function assertMayTakeOverUser(db: DbOrTrx, actor: Actor, userId: string, what: string): Promise<void> {
  enforce(mayTakeOverUser(actor, await listRolesHeldByUser(db, userId), what));
}

/**
 * Refuses a change that would leave no active user holding super_admin (docs/rbac.md). Call inside the transaction
 * that makes the change: the super_admin role row is locked first, so concurrent removals are serialised.
 */
export async function assertNotLastSuperAdmin(trx: DbOrTrx, userId: string, what: string): Promise<void> {
  await lockSuperAdminRole(trx);
  const others = await countUsersWithGlobalRoles(trx, [SUPER_ADMIN], { exceptUserId: userId });
  if (others === 0) throw conflict(say('lastSuperAdmin', { what }));
}

/** Every role the account holds, assigned or granted by a SCIM group, each with how (CONTRACT §20). */
export async function listUserRoles(ctx: ServiceContext, userId: string): Promise<HeldRoleRow[]> {
  await userOr404(ctx.db, userId);
  return listRolesHeldByUser(ctx.db, userId);
}

/** The actor as a granter of roles: with the API scopes their active roles grant (rbac-policy mayHandOutRole). */
export async function granterOf(db: DbOrTrx, actor: Actor): Promise<Granter> {
  return {
    userId: actor.userId,
    roleNames: actor.roleNames,
    permissions: actor.permissions,
    apiScopes: await listApiScopesHeldByUser(db, actor.userId),
  };
}

/**
 * The roles this actor may hand out (GET /api/users/roles/assignable), active or not, by the one rule every grant
 * follows (rbac-policy mayHandOutRole); a deactivated one is listed with is_active false and refused (409) if granted.
 */
export async function listAssignableRoles(ctx: ServiceContext, actor: Actor): Promise<RoleRow[]> {
  const [granter, roles] = await Promise.all([granterOf(ctx.db, actor), listRoles(ctx.db)]);
  return roles.filter((role) => mayHandOutRole(granter, role).allowed);
}

async function resolveRoleRef(db: DbOrTrx, ref: RoleRef): Promise<RoleRow> {
  const role = 'roleId' in ref ? await findRoleById(db, ref.roleId) : await findRoleByName(db, ref.role, ref.application);
  if (!role) throw notFound('Role');
  return role;
}

/** Idempotent: `assigned` is false when the user already held the role. */
export async function assignUserRole(
  ctx: ServiceContext,
  actor: Actor,
  userId: string,
  ref: RoleRef,
): Promise<{ assigned: boolean; roles: RoleRow[] }> {
  const result = await withTransaction(ctx.db, async (trx) => {
    await userOr404(trx, userId);
    const role = await resolveRoleRef(trx, ref);
    enforce(mayGrantRole(await granterOf(trx, actor), role));
    await assertMayManageUser(trx, actor, userId);
    const assigned = await assignRoleToUser(trx, userId, role.id, ctx.clock.now());
    if (assigned) {
      await ctx.events.record(trx, {
        type: 'role.assigned',
        actorId: actor.userId,
        subjectId: userId,
        detail: { role_id: role.id, role: role.name, application: role.application },
      });
    }
    return { assigned, role, roles: await listRolesOfUser(trx, userId) };
  });
  return { assigned: result.assigned, roles: result.roles };
}

/** Grants roles by id to a user created in the same transaction (the invite), under the same rule as assignUserRole. */
export async function grantRolesOnCreate(trx: DbOrTrx, actor: Actor, userId: string, roleIds: readonly string[], now: Date): Promise<void> {
  if (roleIds.length === 0) return;
  const granter = await granterOf(trx, actor);
  for (const roleId of roleIds) {
    const role = await roleOr404(trx, roleId);
    enforce(mayGrantRole(granter, role));
    await assignRoleToUser(trx, userId, role.id, now);
  }
}

export async function removeUserRole(ctx: ServiceContext, actor: Actor, userId: string, roleId: string): Promise<void> {
  await withTransaction(ctx.db, async (trx) => {
    const user = await userOr404(trx, userId);
    const role = await roleOr404(trx, roleId);
    await assertMayManageUser(trx, actor, userId);
    enforce(mayRemoveRole(actor, role));
    if (role.name === SUPER_ADMIN && role.application === null && user.isActive)
      await assertNotLastSuperAdmin(trx, userId, 'Removing this role');
    const removed = await removeRoleFromUser(trx, userId, roleId);
    if (!removed) throw notFound('Role assignment');
    await ctx.events.record(trx, {
      type: 'role.removed',
      actorId: actor.userId,
      subjectId: userId,
      detail: { role_id: role.id, role: role.name, application: role.application },
    });
  });
}

/** Resolved roles and permissions of any user (only active global roles grant server permissions). */
export async function getUserAccess(
  ctx: ServiceContext,
  userId: string,
): Promise<{ user: UserRow; roles: PrincipalRole[]; permissions: string[] }> {
  const user = await userOr404(ctx.db, userId);
  const access = await loadUserAccess(ctx.db, userId);
  return { user, ...access };
}

/** The same rule as requirePermission on a live request; a deactivated user holds nothing. */
export async function checkUserPermission(ctx: ServiceContext, userId: string, permission: string): Promise<boolean> {
  const { user, roles, permissions } = await getUserAccess(ctx, userId);
  if (!user.isActive) return false;
  return hasPermission({ roleNames: globalRoleNames(roles), permissions }, permission);
}

/** Active users holding an active global admin-tier role (super_admin, admin, manager: spec §2.9). */
export async function listAdminUsers(ctx: ServiceContext): Promise<UserWithRoles[]> {
  const users = await listUsersWithGlobalRoles(ctx.db, ADMIN_TIER);
  const roles = await listActiveRolesOfUsers(
    ctx.db,
    users.map((u) => u.id),
  );
  return users.map((user) => ({ user, roles: roles.get(user.id) ?? [] }));
}

export async function countAdminUsers(ctx: ServiceContext): Promise<number> {
  return countUsersWithGlobalRoles(ctx.db, ADMIN_TIER);
}

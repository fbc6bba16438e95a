import { randomUUID } from 'node:crypto';
import { withTransaction, type DbOrTrx } from '../db';
import { mapDbError } from '../db/pg-errors';
import { loadUserAccess, type PrincipalRole } from '../db/repositories/principal.repo';
import {
  findRoleById,
  findRoleByName,
  insertRole,
  listPermissions,
  listRoles as listRoleRows,
  listRolesOfUser,
  lockSuperAdminRole,
  setRolePermissions,
  updateRole as updateRoleRow,
  type PermissionRow,
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
import { badRequest, conflict, forbidden, notFound } from '../errors';
import type { ServiceContext } from './context';
import { ADMIN_TIER, globalRoleNames, hasPermission, type Principal } from './principal';

/** Who is asking: the live principal of the request. */
export type Actor = Pick<Principal, 'userId' | 'roleNames' | 'permissions'>;

export const SUPER_ADMIN = 'super_admin';

/** The seeded global roles whose names the server itself relies on (requireAdmin, adminRole, verify-admin). */
const BUILT_IN_ROLES = new Set<string>(ADMIN_TIER);

const ROLE_NAME_TAKEN = 'A role with this name already exists in this application';

export type RoleRef = { roleId: string } | { role: string; application: string | null };

export interface UserWithRoles {
  user: UserRow;
  roles: PrincipalRole[];
}

export function isGlobalSuperAdmin(role: { name: string; application: string | null }): boolean {
  return role.name === SUPER_ADMIN && role.application === null;
}

function isBuiltIn(role: RoleRow): boolean {
  return role.application === null && BUILT_IN_ROLES.has(role.name);
}

export function actorIsSuperAdmin(actor: Actor): boolean {
  return actor.roleNames.includes(SUPER_ADMIN);
}

/** super_admin 3, admin 2, manager 1, anyone else 0: the admin tier decides requireAdmin/verify-admin by name. */
function adminRank(roleNames: readonly string[]): number {
  const i = ADMIN_TIER.findIndex((r) => roleNames.includes(r));
  return i === -1 ? 0 : ADMIN_TIER.length - i;
}

/** True when the actor holds every one of `permissions` (a super_admin holds them all). */
function holdsAll(actor: Actor, permissions: readonly string[]): boolean {
  return permissions.every((p) => hasPermission(actor, p));
}

/**
 * The actor may change an account (profile, email, activity, roles) only if the target has no right the actor
 * lacks: no higher admin-tier role and no permission the actor does not hold. Otherwise a holder of users:write
 * (a manager) could point an admin's email at an address they read, reset its password and climb (docs/rbac.md).
 */
export function assertMayManageUser(actor: Actor, target: { roles: PrincipalRole[]; permissions: string[] }): void {
  if (target.roles.some(isGlobalSuperAdmin) && !actorIsSuperAdmin(actor)) {
    throw forbidden('Only a super_admin may change a super_admin account');
  }
  if (adminRank(globalRoleNames(target.roles)) > adminRank(actor.roleNames) || !holdsAll(actor, target.permissions)) {
    throw forbidden('You cannot change an account that holds rights you do not hold');
  }
}

/**
 * Strictly more rights than the role: nobody outranks the global super_admin; a super_admin outranks every other
 * role; anyone else must hold every permission of the role and be above it (a higher admin tier, or a
 * permission the role lacks) while never below its admin tier. Peers (a manager and a manager) never outrank each
 * other.
 */
function strictlyOutranks(actor: Actor, role: { name: string; application: string | null; permissions: string[] }): boolean {
  if (isGlobalSuperAdmin(role)) return false;
  if (actorIsSuperAdmin(actor)) return true;
  const roleRank = adminRank([role.name]);
  const actorRank = adminRank(actor.roleNames);
  if (actorRank < roleRank || !holdsAll(actor, role.permissions)) return false;
  return actorRank > roleRank || actor.permissions.some((p) => !role.permissions.includes(p));
}

/**
 * CONTRACT §8: changing another account's email or password, or re-activating it, hands the account (and every
 * app it signs in to) to whoever reads the new mailbox, so it needs strictly more rights than EVERY role the
 * target holds, deactivated roles and application-scoped roles included (a deactivated role may be re-activated
 * later, and an application role is power in another app). Call inside the transaction that makes the change.
 */
export async function assertMayTakeOverUser(db: DbOrTrx, actor: Actor, userId: string, what: string): Promise<void> {
  const roles = await listRolesOfUser(db, userId);
  const above = roles.find((role) => !strictlyOutranks(actor, role));
  if (above) throw forbidden(`${what} needs strictly more rights than the account's role ${above.name}`);
}

/**
 * Refuses a change that would leave no active user holding super_admin (docs/rbac.md). Call inside the transaction
 * that makes the change: the super_admin role row is locked first, so concurrent removals are serialised.
 */
export async function assertNotLastSuperAdmin(trx: DbOrTrx, userId: string, what: string): Promise<void> {
  await lockSuperAdminRole(trx);
  const others = await countUsersWithGlobalRoles(trx, [SUPER_ADMIN], { exceptUserId: userId });
  if (others === 0) throw conflict(`${what} would leave no active super_admin`);
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

async function roleOr404(db: DbOrTrx, roleId: string): Promise<RoleRow> {
  const role = await findRoleById(db, roleId);
  if (!role) throw notFound('Role');
  return role;
}

async function userOr404(db: DbOrTrx, userId: string): Promise<UserRow> {
  const user = await findUserById(db, userId);
  if (!user) throw notFound('User');
  return user;
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
      return (await findRoleById(trx, id))!;
    });
  } catch (err) {
    throw mapDbError(err, ROLE_NAME_TAKEN);
  }
  ctx.events.emit({ type: 'role.created', subjectId: role.id, detail: { name: role.name, application: role.application, permissions } });
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
      if (isBuiltIn(role) && patch.name !== undefined && patch.name !== role.name) {
        throw conflict(`The built-in role ${role.name} cannot be renamed`);
      }
      if (isGlobalSuperAdmin(role) && permissions) {
        throw conflict('super_admin always holds every permission; its permissions cannot be edited');
      }
      if (isGlobalSuperAdmin(role) && patch.isActive === false) {
        throw conflict('The super_admin role cannot be deactivated');
      }
      await updateRoleRow(trx, roleId, { name: patch.name, description: patch.description, isActive: patch.isActive }, ctx.clock.now());
      if (permissions) await setRolePermissions(trx, roleId, permissions);
      return (await findRoleById(trx, roleId))!;
    });
  } catch (err) {
    throw mapDbError(err, ROLE_NAME_TAKEN);
  }
  const fields = Object.keys(patch).filter((k) => patch[k as keyof typeof patch] !== undefined);
  ctx.events.emit({ type: 'role.changed', subjectId: roleId, detail: { name: updated.name, fields, ...(permissions ? { permissions } : {}) } });
  return updated;
}

/**
 * Roles are deactivated, never deleted (spec §2.9): assignments stay, but grant nothing from the next request on,
 * because permissions are resolved live.
 */
export async function deactivateRole(ctx: ServiceContext, roleId: string): Promise<RoleRow> {
  return updateRole(ctx, roleId, { isActive: false });
}

export async function listUserRoles(ctx: ServiceContext, userId: string): Promise<RoleRow[]> {
  await userOr404(ctx.db, userId);
  return listRolesOfUser(ctx.db, userId);
}

async function resolveRoleRef(db: DbOrTrx, ref: RoleRef): Promise<RoleRow> {
  const role = 'roleId' in ref ? await findRoleById(db, ref.roleId) : await findRoleByName(db, ref.role, ref.application);
  if (!role) throw notFound('Role');
  return role;
}

/**
 * Checks a role may be granted by this actor: it is active, super_admin is granted only by a super_admin, and a
 * global role (the only kind that grants rights here) carries no admin tier above the actor's and no permission the
 * actor lacks, so users:manage_roles alone cannot promote anyone, the actor included, above the actor (docs/rbac.md).
 */
export function assertGrantable(actor: Actor, role: RoleRow): void {
  if (!role.isActive) throw conflict(`Role ${role.name} is deactivated and cannot be assigned`);
  if (isGlobalSuperAdmin(role) && !actorIsSuperAdmin(actor)) throw forbidden('Only a super_admin may grant super_admin');
  if (role.application === null && (adminRank([role.name]) > adminRank(actor.roleNames) || !holdsAll(actor, role.permissions))) {
    throw forbidden(`Granting ${role.name} requires holding every right it grants`);
  }
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
    assertGrantable(actor, role);
    assertMayManageUser(actor, await loadUserAccess(trx, userId));
    const assigned = await assignRoleToUser(trx, userId, role.id, ctx.clock.now());
    return { assigned, role, roles: await listRolesOfUser(trx, userId) };
  });
  if (result.assigned) {
    ctx.events.emit({ type: 'role.assigned', actorId: actor.userId, subjectId: userId, detail: { role_id: result.role.id, role: result.role.name, application: result.role.application } });
  }
  return { assigned: result.assigned, roles: result.roles };
}

export async function removeUserRole(ctx: ServiceContext, actor: Actor, userId: string, roleId: string): Promise<void> {
  const role = await withTransaction(ctx.db, async (trx) => {
    const user = await userOr404(trx, userId);
    const role = await roleOr404(trx, roleId);
    assertMayManageUser(actor, await loadUserAccess(trx, userId));
    if (isGlobalSuperAdmin(role)) {
      if (!actorIsSuperAdmin(actor)) throw forbidden('Only a super_admin may remove super_admin');
      if (user.isActive) await assertNotLastSuperAdmin(trx, userId, 'Removing this role');
    }
    const removed = await removeRoleFromUser(trx, userId, roleId);
    if (!removed) throw notFound('Role assignment');
    return role;
  });
  ctx.events.emit({ type: 'role.removed', actorId: actor.userId, subjectId: userId, detail: { role_id: role.id, role: role.name, application: role.application } });
}

/** Resolved roles and permissions of any user (only active global roles grant server permissions). */
export async function getUserAccess(ctx: ServiceContext, userId: string): Promise<{ user: UserRow; roles: PrincipalRole[]; permissions: string[] }> {
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
  const roles = await listActiveRolesOfUsers(ctx.db, users.map((u) => u.id));
  return users.map((user) => ({ user, roles: roles.get(user.id) ?? [] }));
}

export async function countAdminUsers(ctx: ServiceContext): Promise<number> {
  return countUsersWithGlobalRoles(ctx.db, ADMIN_TIER);
}

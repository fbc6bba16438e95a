/**
 * The RBAC rules as pure functions (docs/rbac.md): ranks, who may manage or take over an account, who may grant
 * or remove a role, who holds a permission. No database: the services load the rows, ask here, and enforce the
 * verdict; test/unit/rbac-policy.test.ts checks every rule as a table of actor × target × expected.
 */
import { AppError } from '../errors';
import { isGlobalSuperAdmin, SUPER_ADMIN } from '../declarations/roles';
import { isOneOf } from '../lib/one-of';

export { isGlobalSuperAdmin, SUPER_ADMIN } from '../declarations/roles';

/** The admin tier, highest first: the only role names the server itself relies on (requireAdmin, adminRole). */
export const ADMIN_TIER = ['super_admin', 'admin', 'manager'] as const;

/** The spec's "permission `admin`" (CONTRACT §6): one of these global roles. */
export const SPEC_ADMIN_ROLES = ['admin', SUPER_ADMIN] as const;

/** Who is asking: the live principal of the request (global role names and resolved permissions). */
export interface Actor {
  userId: string;
  roleNames: readonly string[];
  permissions: readonly string[];
}

/** A role as the rules see it. */
export interface RoleFacts {
  name: string;
  application: string | null;
  permissions: readonly string[];
  isActive?: boolean;
}

/** The rights of an account: its roles (application and activity included) and resolved permissions. */
export interface AccountFacts {
  roles: ReadonlyArray<{ name: string; application: string | null }>;
  permissions: readonly string[];
}

export type Verdict = { allowed: true } | { allowed: false; code: 'forbidden' | 'conflict'; reason: string };

const ALLOWED: Verdict = { allowed: true };
const forbid = (reason: string): Verdict => ({ allowed: false, code: 'forbidden', reason });
const conflictWith = (reason: string): Verdict => ({ allowed: false, code: 'conflict', reason });

/** Throws the verdict's 403 or 409 when it refuses. */
export function enforce(verdict: Verdict): void {
  if (!verdict.allowed) throw new AppError(verdict.code, verdict.reason);
}

/**
 * CONTRACT §23 "Admin policy by permission": the permissions that make their holder an administrator, declared once.
 * Every permission of this server's catalogue gates an administration API (users, roles, clients, resources,
 * identity providers, webhooks, provisioning), so every one is an admin permission, including permissions added
 * later; a future permission that grants no administration would be listed in NON_ADMIN_PERMISSIONS (none today).
 */
export const NON_ADMIN_PERMISSIONS: ReadonlySet<string> = new Set<string>();

export function isAdminPermission(permission: string): boolean {
  return !NON_ADMIN_PERMISSIONS.has(permission);
}

/**
 * Whether a caller counts as an administrator for the rules that protect administrators (MFA_REQUIRED_FOR_ADMINS):
 * an admin-tier role, or any admin permission through any role, whatever the role is called (docs/rbac.md).
 */
export function holdsAdminRights(principal: Pick<Actor, 'roleNames' | 'permissions'>): boolean {
  return adminRank(principal.roleNames) > 0 || principal.permissions.some(isAdminPermission);
}

/** CONTRACT §23: a client's `is_active` (deactivate or re-activate) changes only with this permission. */
export const CLIENT_ACTIVATION_PERMISSION = 'oauth_clients:delete';

/** super_admin holds every permission; anyone else holds what their active global roles grant. */
export function hasPermission(principal: Pick<Actor, 'roleNames' | 'permissions'>, permission: string): boolean {
  return principal.roleNames.includes(SUPER_ADMIN) || principal.permissions.includes(permission);
}

/** The seeded global roles whose names the server relies on: they keep their names. */
export function isBuiltInRole(role: { name: string; application: string | null }): boolean {
  return role.application === null && isOneOf(ADMIN_TIER, role.name);
}

export function actorIsSuperAdmin(actor: Pick<Actor, 'roleNames'>): boolean {
  return actor.roleNames.includes(SUPER_ADMIN);
}

/** super_admin 3, admin 2, manager 1, anyone else 0. */
export function adminRank(roleNames: readonly string[]): number {
  const i = ADMIN_TIER.findIndex((r) => roleNames.includes(r));
  return i === -1 ? 0 : ADMIN_TIER.length - i;
}

/** True when the actor holds every one of `permissions` (a super_admin holds them all). */
export function holdsAll(actor: Pick<Actor, 'roleNames' | 'permissions'>, permissions: readonly string[]): boolean {
  return permissions.every((p) => hasPermission(actor, p));
}

const globalNames = (roles: AccountFacts['roles']) => roles.filter((r) => r.application === null).map((r) => r.name);

/**
 * The actor may change an account (profile, email, activity, roles) only if the target has no right the actor
 * lacks: no higher admin-tier role and no permission the actor does not hold. Otherwise a holder of users:write
 * (a manager) could point an admin's email at an address they read, reset its password and climb.
 */
export function mayManageUser(actor: Actor, target: AccountFacts): Verdict {
  if (target.roles.some(isGlobalSuperAdmin) && !actorIsSuperAdmin(actor))
    return forbid('Only a super_admin may change a super_admin account');
  if (adminRank(globalNames(target.roles)) > adminRank(actor.roleNames) || !holdsAll(actor, target.permissions)) {
    return forbid('You cannot change an account that holds rights you do not hold');
  }
  return ALLOWED;
}

/**
 * Strictly more rights than the role: nobody outranks the global super_admin; a super_admin outranks every other
 * role; anyone else must hold every permission of the role and be above it (a higher admin tier, or a permission
 * the role lacks) while never below its admin tier. Peers (a manager and a manager) never outrank each other.
 */
export function strictlyOutranks(actor: Actor, role: RoleFacts): boolean {
  if (isGlobalSuperAdmin(role)) return false;
  if (actorIsSuperAdmin(actor)) return true;
  const roleRank = adminRank([role.name]);
  const actorRank = adminRank(actor.roleNames);
  if (actorRank < roleRank || !holdsAll(actor, role.permissions)) return false;
  return actorRank > roleRank || actor.permissions.some((p) => !role.permissions.includes(p));
}

/**
 * CONTRACT §8: changing another account's email or re-activating it hands the account to whoever reads the
 * mailbox, so it needs strictly more rights than EVERY role the target holds, deactivated and application-scoped
 * roles included.
 */
export function mayTakeOverUser(actor: Actor, targetRoles: readonly RoleFacts[], what: string): Verdict {
  const above = targetRoles.find((role) => !strictlyOutranks(actor, role));
  return above ? forbid(`${what} needs strictly more rights than the account's role ${above.name}`) : ALLOWED;
}

/** A scope of an API resource (its identifier) that a role grants. */
export interface ApiScopeFacts {
  resource: string;
  scope: string;
}

/** A scope the granter holds through an active role: for every application (`application` null) or for one. */
export interface HeldApiScope extends ApiScopeFacts {
  application: string | null;
}

/** Who grants a role: the actor and the API scopes their active roles grant them (db: listApiScopesHeldByUser). */
export interface Granter extends Actor {
  apiScopes: readonly HeldApiScope[];
}

/** A role as granting sees it: its permissions and the API scopes it carries. */
export interface GrantableRole extends RoleFacts {
  apiScopes: readonly ApiScopeFacts[];
}

/**
 * The spec's "permission `admin`" (CONTRACT §6: role admin or super_admin) may hand out any API scope: the scopes of
 * business APIs are theirs to distribute, as users:manage_roles exists for (docs/rbac.md). Anyone else only what they hold.
 */
function handsOutAnyApiScope(granter: Pick<Actor, 'roleNames'>): boolean {
  return SPEC_ADMIN_ROLES.some((name) => granter.roleNames.includes(name));
}

/**
 * Whether the granter holds this API scope for the role's application: through a global role (every application), or,
 * for a role scoped to an application, through a role scoped to that same application.
 */
function holdsApiScope(granter: Granter, wanted: ApiScopeFacts, application: string | null): boolean {
  return granter.apiScopes.some(
    (held) =>
      held.resource === wanted.resource &&
      held.scope === wanted.scope &&
      (held.application === null || (application !== null && held.application === application)),
  );
}

/**
 * THE rule of handing out a role (docs/rbac.md "Guard rails"), declared once: whether the granter's rights cover the
 * role's, whatever its activity. super_admin only by a super_admin; a global role (the only kind that grants this
 * server's permissions) with no admin tier above the granter's and no permission the granter lacks; and any role, global
 * or scoped to an application, with no API scope the granter does not hold for that application (admin and super_admin
 * excepted). So users:manage_roles alone cannot promote anyone, the granter included, above the granter. Every grant
 * (assignment, invitation, import, SCIM group mapping) and the list of assignable roles ask here.
 */
export function mayHandOutRole(granter: Granter, role: GrantableRole): Verdict {
  if (isGlobalSuperAdmin(role) && !actorIsSuperAdmin(granter)) return forbid('Only a super_admin may grant super_admin');
  if (role.application === null && (adminRank([role.name]) > adminRank(granter.roleNames) || !holdsAll(granter, role.permissions))) {
    return forbid(`Granting ${role.name} requires holding every right it grants`);
  }
  if (!handsOutAnyApiScope(granter)) {
    const missing = role.apiScopes.find((wanted) => !holdsApiScope(granter, wanted, role.application));
    if (missing) {
      return forbid(
        `Granting ${role.name} requires holding every API scope it grants: you do not hold ${missing.scope} of ${missing.resource}` +
          (role.application === null ? '' : ` for ${role.application}`),
      );
    }
  }
  return ALLOWED;
}

/** A role may be granted when it is active and the granter may hand it out (mayHandOutRole). */
export function mayGrantRole(granter: Granter, role: GrantableRole): Verdict {
  if (role.isActive === false) return conflictWith(`Role ${role.name} is deactivated and cannot be assigned`);
  return mayHandOutRole(granter, role);
}

/** super_admin is removed only by a super_admin (and never from the last one: a database question, see the service). */
export function mayRemoveRole(actor: Actor, role: { name: string; application: string | null }): Verdict {
  return isGlobalSuperAdmin(role) && !actorIsSuperAdmin(actor) ? forbid('Only a super_admin may remove super_admin') : ALLOWED;
}

/** What may change on a role: built-in names are fixed; super_admin keeps every permission and stays active. */
export function mayUpdateRole(
  role: { name: string; application: string | null },
  patch: { name?: string; application?: string | null; permissions?: readonly string[]; isActive?: boolean },
): Verdict {
  if (
    patch.application !== undefined &&
    patch.application !== role.application &&
    (role.application === null || patch.application === null)
  )
    return conflictWith('A global role stays global and an application-scoped role stays scoped to an application');
  if (isBuiltInRole(role) && patch.name !== undefined && patch.name !== role.name)
    return conflictWith(`The built-in role ${role.name} cannot be renamed`);
  if (isGlobalSuperAdmin(role) && patch.permissions)
    return conflictWith('super_admin always holds every permission; its permissions cannot be edited');
  if (isGlobalSuperAdmin(role) && patch.isActive === false) return conflictWith('The super_admin role cannot be deactivated');
  return ALLOWED;
}

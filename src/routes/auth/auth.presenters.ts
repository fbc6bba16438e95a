import type { PrincipalRecord } from '../../db/repositories/principal.repo';
import type { Principal } from '../../services/principal';
import { adminRoleOf, fullName, scopeAllows } from '../../services/principal';

type UserLike = Pick<PrincipalRecord, 'id' | 'email' | 'firstName' | 'lastName' | 'isActive' | 'emailVerified'>;

/** Who a user is, in every user object (CONTRACT §4, §6). Fields are listed one by one: nothing else leaks. */
export function presentIdentity(user: UserLike) {
  return {
    id: user.id,
    email: user.email,
    name: fullName(user.firstName, user.lastName),
    first_name: user.firstName,
    last_name: user.lastName,
    is_active: user.isActive,
    email_verified: user.emailVerified,
  };
}

/** The user object of me, login and register (CONTRACT §4). */
export function presentAuthUser(user: UserLike, access: { roleNames: string[]; permissions: string[]; amr?: string[] }) {
  // No spreads (the user object of every /me answer): the identity's own object, given the access fields in place.
  const presented: ReturnType<typeof presentIdentity> & { roles: string[]; permissions: string[]; adminRole: string; amr?: string[] } =
    Object.assign(presentIdentity(user), {
      roles: access.roleNames,
      permissions: access.permissions,
      adminRole: adminRoleOf(access.roleNames),
    });
  // CONTRACT §10 (beyond the spec): how the user signed in to this session.
  if (access.amr) presented.amr = access.amr;
  return presented;
}

export function presentPrincipal(principal: Principal) {
  return presentAuthUser(
    {
      id: principal.userId,
      email: principal.email,
      firstName: principal.firstName,
      lastName: principal.lastName,
      isActive: principal.isActive,
      emailVerified: principal.emailVerified,
    },
    principal,
  );
}

/**
 * GET /me and /verify-admin (CONTRACT §8): a token issued to an OAuth client sees only what its scope allows:
 * `email`, `email_verified` with `email`; `name`, `first_name`, `last_name` with `profile`; `roles`,
 * `permissions`, `adminRole` (and `amr`) with `read`; `id` and `is_active` always. First-party tokens see all.
 */
export function presentPrincipalForToken(principal: Principal) {
  const full = presentPrincipal(principal);
  if (!principal.clientId) return full;
  return {
    id: full.id,
    is_active: full.is_active,
    ...(scopeAllows(principal, 'email') ? { email: full.email, email_verified: full.email_verified } : {}),
    ...(scopeAllows(principal, 'profile') ? { name: full.name, first_name: full.first_name, last_name: full.last_name } : {}),
    ...(scopeAllows(principal, 'read')
      ? { roles: full.roles, permissions: full.permissions, adminRole: full.adminRole, ...(full.amr ? { amr: full.amr } : {}) }
      : {}),
  };
}

import type { PrincipalRecord } from '../../db/repositories/principal.repo';
import type { Principal } from '../../services/principal';
import { adminRoleOf, fullName } from '../../services/principal';

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
  return {
    ...presentIdentity(user),
    roles: access.roleNames,
    permissions: access.permissions,
    adminRole: adminRoleOf(access.roleNames),
    // CONTRACT §10 (beyond the spec): how the user signed in to this session.
    ...(access.amr ? { amr: access.amr } : {}),
  };
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

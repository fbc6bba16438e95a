import type { Principal } from '../../services/principal';
import { adminRoleOf, fullName } from '../../services/principal';

interface UserLike {
  id: string;
  email: string;
  firstName: string;
  lastName: string;
  isActive: boolean;
  emailVerified: boolean;
}

/** The user object of me, login and register (CONTRACT §4). Fields are listed one by one: nothing else leaks. */
export function presentAuthUser(user: UserLike, access: { roleNames: string[]; permissions: string[]; amr?: string[] }) {
  return {
    id: user.id,
    email: user.email,
    name: fullName(user.firstName, user.lastName),
    first_name: user.firstName,
    last_name: user.lastName,
    roles: access.roleNames,
    permissions: access.permissions,
    adminRole: adminRoleOf(access.roleNames),
    is_active: user.isActive,
    email_verified: user.emailVerified,
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

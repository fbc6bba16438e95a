import type { PrincipalRole } from '../../db/repositories/principal.repo';
import type { UserRow } from '../../db/repositories/users.repo';
import { adminRoleOf, globalRoleNames } from '../../services/principal';
import { presentIdentity } from '../auth/auth.presenters';
import { userStatus } from '../../declarations/user-status';

/** `{ id, name, application }`: how a user's roles appear inside user objects (CONTRACT §6). */
export function presentRoleRef(role: PrincipalRole) {
  return { id: role.id, name: role.name, application: role.application };
}

/** A user in listings: the user detail without resolved permissions. Never the password hash. */
export function presentUserSummary(user: UserRow, roles: PrincipalRole[]) {
  return {
    ...presentIdentity(user),
    roles: roles.map(presentRoleRef),
    created_at: user.createdAt.toISOString(),
    updated_at: user.updatedAt.toISOString(),
    last_login_at: user.lastLoginAt?.toISOString() ?? null,
    status: userStatus(user),
    invitation_expires_at: user.invitationExpiresAt?.toISOString() ?? null,
  };
}

/** User detail (CONTRACT §6): the listing fields plus the resolved permissions. */
export function presentUserDetail(detail: { user: UserRow; roles: PrincipalRole[]; permissions: string[] }) {
  return { ...presentUserSummary(detail.user, detail.roles), permissions: detail.permissions };
}

/** An administrator in the admin lists: the summary plus the highest admin-tier role held. */
export function presentAdminUser(entry: { user: UserRow; roles: PrincipalRole[] }) {
  return { ...presentUserSummary(entry.user, entry.roles), adminRole: adminRoleOf(globalRoleNames(entry.roles)) };
}

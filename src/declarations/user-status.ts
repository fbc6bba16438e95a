/**
 * How an account is shown (docs/rbac.md, "Invitations"): invited until the invited person sets a password, inactive
 * when deactivated (whatever else), else active. The API's `status` and the console's badge.
 */
export type UserStatus = 'invited' | 'active' | 'inactive';

export function userStatus(user: { isActive: boolean; invitationExpiresAt?: Date | null }): UserStatus {
  if (!user.isActive) return 'inactive';
  return user.invitationExpiresAt ? 'invited' : 'active';
}

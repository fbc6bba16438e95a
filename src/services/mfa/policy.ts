import type { SettingValues } from '../settings/declarations';
import { adminRoleOf } from '../principal';

/** RFC 8176 values this server writes into `amr` (CONTRACT §10; `fed`: an upstream identity provider, §16). */
export const AMR = { password: 'pwd', totp: 'otp', passkey: 'hwk', recoveryCode: 'rec', federated: 'fed' } as const;

/** The methods that count as a second factor: a TOTP code, a passkey (possession + user verification), a recovery code. */
const SECOND_FACTORS: ReadonlySet<string> = new Set([AMR.totp, AMR.passkey, AMR.recoveryCode]);

export function hasSecondFactor(amr: readonly string[]): boolean {
  return amr.some((m) => SECOND_FACTORS.has(m));
}

/**
 * MFA_REQUIRED_FOR_ADMINS (CONTRACT §10): an admin-tier caller (super_admin, admin, manager) whose session was
 * opened without a second factor must enrol / sign in with one before using the users, RBAC and admin APIs.
 */
export function needsSecondFactorForAdmin(
  settings: Pick<SettingValues, 'mfa_required_for_admins'>,
  principal: { roleNames: string[]; amr: string[] },
): boolean {
  return settings.mfa_required_for_admins && adminRoleOf(principal.roleNames) !== 'user' && !hasSecondFactor(principal.amr);
}

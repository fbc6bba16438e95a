import type { SettingValues } from '../settings/declarations';
import { holdsAdminRights } from '../rbac-policy';

/** RFC 8176 values this server writes into `amr` (CONTRACT §10; `fed`: an upstream identity provider, §16). */
export const AMR = { password: 'pwd', totp: 'otp', passkey: 'hwk', recoveryCode: 'rec', federated: 'fed' } as const;

/** The methods that count as a second factor: a TOTP code, a passkey (possession + user verification), a recovery code. */
const SECOND_FACTORS: ReadonlySet<string> = new Set([AMR.totp, AMR.passkey, AMR.recoveryCode]);

export function hasSecondFactor(amr: readonly string[]): boolean {
  return amr.some((m) => SECOND_FACTORS.has(m));
}

/**
 * mfa_required_for_admins (CONTRACT §10, §23; a runtime setting, §18): a caller holding an admin-tier role or any admin permission
 * (rbac-policy.ts holdsAdminRights, whatever the role's name) whose session was opened without a second factor
 * must enrol / sign in with one before using the users, RBAC and admin APIs.
 */
export function needsSecondFactorForAdmin(
  settings: Pick<SettingValues, 'mfa_required_for_admins'>,
  principal: { roleNames: readonly string[]; permissions: readonly string[]; amr: readonly string[] },
): boolean {
  return settings.mfa_required_for_admins && holdsAdminRights(principal) && !hasSecondFactor(principal.amr);
}

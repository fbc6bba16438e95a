import type { SettingValues } from '../../declarations/settings';
import { holdsAdminRights } from '../rbac-policy';

/** RFC 8176 values this server writes into `amr` (CONTRACT §10; `fed`: an upstream identity provider, §16). */
export const AMR = { password: 'pwd', totp: 'otp', passkey: 'hwk', recoveryCode: 'rec', federated: 'fed' } as const;

/** The methods that count as a second factor: a TOTP code, a passkey (possession + user verification), a recovery code. */
const SECOND_FACTORS: ReadonlySet<string> = new Set([AMR.totp, AMR.passkey, AMR.recoveryCode]);

/**
 * Whether a session's sign-in included a second factor. `amr` lists the first factor first: a passkey counts on its own
 * (possession plus user verification); any other method counts only after a first one. Sign-in by email writes
 * `["otp"]` (RFC 8176: a one-time code), which is one factor, the mailbox: alone it is not a second factor, after
 * which its second step makes `["otp", "otp"]`, `["otp", "hwk"]` or `["otp", "rec"]`.
 */
export function hasSecondFactor(amr: readonly string[]): boolean {
  return amr.includes(AMR.passkey) || amr.slice(1).some((m) => SECOND_FACTORS.has(m));
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

/** The account page's second-factor section, keeping where the person was going (MFA_REQUIRED_FOR_ADMINS, CONTRACT §10). */
export function enrolUrlFor(returnTo: string | undefined): string {
  return `/account?${new URLSearchParams({ enrol: 'required', ...(returnTo ? { return_to: returnTo } : {}) })}#second-factors`;
}

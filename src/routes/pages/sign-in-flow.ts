import type { Response } from 'express';
import type { Config } from '../../config';
import { setSessionCookies } from '../../middleware/session-cookies';
import type { AuthResult } from '../../services/auth.service';
import { needsSecondFactorForAdmin } from '../../services/mfa/policy';
import { resolveReturnTo } from '../../services/oauth/return-to';
import { adminRank } from '../../services/rbac-policy';

/** The account page's second-factor section, keeping where the person was going. */
export function enrolUrlFor(returnTo: string | undefined): string {
  return `/account?${new URLSearchParams({ enrol: 'required', ...(returnTo ? { return_to: returnTo } : {}) })}#second-factors`;
}

/**
 * The end of every hosted sign-in (password, second step, passkey): the SSO cookies, then 303 to the allow-listed
 * return_to (open-redirect defence: anything else ends on the signed-in page, GET /login). An admin whom
 * MFA_REQUIRED_FOR_ADMINS concerns and who signed in without a second factor goes to enrol first (CONTRACT §10).
 */
export function finishSignIn(res: Response, config: Config, result: AuthResult, returnTo: string | undefined): void {
  setSessionCookies(res, config, result.tokens);
  const target = resolveReturnTo(config, returnTo);
  const enrol = needsSecondFactorForAdmin(config, { roleNames: result.tokens.access.roleNames, amr: result.tokens.amr });
  // CONTRACT §14: an administrator without a destination lands in the console; anyone else on the signed-in page.
  const landing = adminRank(result.tokens.access.roleNames) > 0 ? '/admin' : '/login';
  res.redirect(303, enrol ? enrolUrlFor(target ?? (landing === '/admin' ? '/admin' : undefined)) : (target ?? landing));
}

import type { Request, Response } from 'express';
import { rotateCsrf } from '../../middleware/csrf';
import { setSessionCookies } from '../../middleware/session-cookies';
import type { AuthResult } from '../../services/auth.service';
import type { ServiceContext } from '../../services/context';
import { listEnabledProviders } from '../../services/federation/providers.service';
import { completePendingLink, describePendingLink } from '../../services/federation/sign-in.service';
import { startUrlOf } from '../federation/federation.presenters';
import { needsSecondFactorForAdmin } from '../../services/mfa/policy';
import { resolveReturnTo } from '../../services/oauth/return-to';
import { adminRank } from '../../services/rbac-policy';

/** A pending link waiting for the person to prove the account (set by the identity provider callback, CONTRACT §16). */
export const IDP_LINK_COOKIE = 'idp_link';
const LINK_COOKIE_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** The account page's second-factor section, keeping where the person was going. */
export function enrolUrlFor(returnTo: string | undefined): string {
  return `/account?${new URLSearchParams({ enrol: 'required', ...(returnTo ? { return_to: returnTo } : {}) })}#second-factors`;
}

/**
 * The end of every hosted sign-in (password, second step, passkey, identity provider): the SSO cookies, then 303 to
 * the allow-listed return_to (open-redirect defence: anything else ends on the signed-in page, GET /login). An admin
 * whom MFA_REQUIRED_FOR_ADMINS concerns and who signed in without a second factor goes to enrol first (CONTRACT §10).
 * A browser carrying a pending identity link (CONTRACT §16) has just proved the account: the link is made when it
 * was waiting for this very account.
 */
export async function finishSignIn(
  ctx: ServiceContext,
  req: Request,
  res: Response,
  result: AuthResult,
  returnTo: string | undefined,
): Promise<void> {
  const { config } = ctx;
  const pending: unknown = req.cookies?.[IDP_LINK_COOKIE];
  if (typeof pending === 'string' && LINK_COOKIE_SHAPE.test(pending) && (await completePendingLink(ctx, pending, result.user.id))) {
    res.clearCookie(IDP_LINK_COOKIE, { httpOnly: true, sameSite: 'lax', secure: config.cookieSecure, path: '/' });
  }
  setSessionCookies(res, config, result.tokens);
  rotateCsrf(res, config);
  const target = resolveReturnTo(config, returnTo);
  const enrol = needsSecondFactorForAdmin(ctx.settings.current.values, { ...result.tokens.access, amr: result.tokens.amr });
  // CONTRACT §14: an administrator without a destination lands in the console; anyone else on the signed-in page.
  const landing = adminRank(result.tokens.access.roleNames) > 0 ? '/admin' : '/login';
  res.redirect(303, enrol ? enrolUrlFor(target ?? (landing === '/admin' ? '/admin' : undefined)) : (target ?? landing));
}

/** What /login shows of CONTRACT §16: a "Continue with {name}" link per enabled provider, and a pending link's account. */
export async function federationOnLoginPage(
  ctx: ServiceContext,
  req: Request,
  returnTo: string | undefined,
): Promise<{ providers: Array<{ name: string; startUrl: string }>; pendingLink?: { email: string; providerName: string } }> {
  const pending: unknown = req.cookies?.[IDP_LINK_COOKIE];
  const [providers, pendingLink] = await Promise.all([
    listEnabledProviders(ctx),
    typeof pending === 'string' && LINK_COOKIE_SHAPE.test(pending) ? describePendingLink(ctx, pending) : undefined,
  ]);
  return { providers: providers.map((p) => ({ name: p.name, startUrl: startUrlOf(p.slug, returnTo) })), pendingLink };
}

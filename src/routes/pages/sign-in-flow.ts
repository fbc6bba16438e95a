import type { Request } from 'express';
import { clearCookie, Redirect, type CookieWrite } from '../../http/outcome';
import type { AuthResult, SecondFactorRequired } from '../../services/auth.service';
import type { ServiceContext } from '../../services/context';
import { listEnabledProviders } from '../../services/federation/providers.service';
import { describePendingLink, describePendingLinkFor } from '../../services/federation/sign-in.service';
import { startUrlOf } from '../federation/federation.presenters';
import { enrolUrlFor, needsSecondFactorForAdmin } from '../../services/mfa/policy';
import { resolveReturnTo } from '../../services/oauth/return-to';
import type { SignInTarget } from '../../services/oauth/sign-in-context';
import { renderSecondStepPage } from '../../views/login';
import { hostedPage, type HostedPage } from './page-kit';
import { adminRank } from '../../services/rbac-policy';
import { signedInCookies } from '../shared';

/** A pending link waiting for the person to prove the account (set by the identity provider callback, CONTRACT §16). */
export const IDP_LINK_COOKIE = 'idp_link';
const LINK_COOKIE_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export { enrolUrlFor } from '../../services/mfa/policy';

/** What decides where a signed-in person goes next: the session's roles, permissions and sign-in methods. */
type SignedIn = Parameters<typeof needsSecondFactorForAdmin>[1] & { roleNames: readonly string[] };

/**
 * Where a signed-in person goes next: the allow-listed return_to (open-redirect defence: anything else ends on the
 * signed-in page, GET /login), unless MFA_REQUIRED_FOR_ADMINS concerns an admin who signed in without a second
 * factor (to enrol first, CONTRACT §10). CONTRACT §14: an administrator without a destination lands in the console.
 */
export function nextAfterSignIn(ctx: ServiceContext, signedIn: SignedIn, returnTo: string | undefined): string {
  const target = resolveReturnTo(ctx.config, returnTo);
  const landing = adminRank(signedIn.roleNames) > 0 ? '/admin' : '/login';
  if (needsSecondFactorForAdmin(ctx.settings.current.values, signedIn)) {
    return enrolUrlFor(target ?? (landing === '/admin' ? '/admin' : undefined));
  }
  return target ?? landing;
}

/** The pending link cookie's value when it has the shape of one. */
export function pendingLinkToken(req: Request): string | undefined {
  const pending: unknown = req.cookies?.[IDP_LINK_COOKIE];
  return typeof pending === 'string' && LINK_COOKIE_SHAPE.test(pending) ? pending : undefined;
}

/** The pending link's cookie cleared (an outcome's cookie). */
export function clearedPendingLink(config: ServiceContext['config']): CookieWrite {
  return clearCookie(IDP_LINK_COOKIE, { httpOnly: true, sameSite: 'lax', secure: config.cookieSecure, path: '/' });
}

/** The pending link's confirmation page, keeping where the sign-in was going. */
export function linkConfirmUrlFor(returnTo: string | undefined): string {
  return `/login/link${returnTo ? `?${new URLSearchParams({ return_to: returnTo })}` : ''}`;
}

/**
 * The end of every hosted sign-in (password, second step, passkey, identity provider): the SSO cookies, then 303 to
 * `nextAfterSignIn`. A browser carrying a pending identity link (CONTRACT §16) waiting for this very account goes to
 * the link's confirmation page first (issue 30): the cookie may have been planted by a sibling subdomain, so the
 * sign-in alone never links; only the person's explicit "Link" there does.
 */
export async function finishSignIn(ctx: ServiceContext, req: Request, result: AuthResult, returnTo: string | undefined): Promise<Redirect> {
  const pending = pendingLinkToken(req);
  const confirmLink = pending !== undefined && (await describePendingLinkFor(ctx, pending, result.user.id)) !== undefined;
  const next = confirmLink
    ? linkConfirmUrlFor(returnTo)
    : nextAfterSignIn(ctx, { ...result.tokens.access, amr: result.tokens.amr }, returnTo);
  return new Redirect(next).withCookies(...signedInCookies(ctx.config, result));
}

/**
 * A first factor accepted for an account with a second one (CONTRACT §10): the second step's page, carrying the
 * mfa_token and where the sign-in goes (its form ends there: CSP form-action).
 */
export function secondStepPage(
  pending: Pick<SecondFactorRequired, 'mfaToken' | 'methods'>,
  returnTo: string | undefined,
  target: Pick<SignInTarget, 'application' | 'formTargets'>,
): HostedPage {
  const { mfaToken, methods } = pending;
  const { application, formTargets } = target;
  return hostedPage(({ csrf }) => renderSecondStepPage({ csrf, returnTo, mfaToken, methods, application }), 200, formTargets);
}

/** What /login shows of CONTRACT §16: a "Continue with {name}" link per enabled provider, and a pending link's account. */
export async function federationOnLoginPage(
  ctx: ServiceContext,
  req: Request,
  returnTo: string | undefined,
): Promise<{ providers: Array<{ name: string; startUrl: string }>; pendingLink?: { email: string; providerName: string } }> {
  const pending = pendingLinkToken(req);
  const [providers, pendingLink] = await Promise.all([
    listEnabledProviders(ctx),
    pending === undefined ? undefined : describePendingLink(ctx, pending),
  ]);
  return { providers: providers.map((p) => ({ name: p.name, startUrl: startUrlOf(p.slug, returnTo) })), pendingLink };
}

import { z } from 'zod';
import { AppError } from '../../errors';
import { UUID_PATTERN } from '../../lib/ids';
import { Redirect } from '../../http/outcome';
import { clearedSessionCookies } from '../../middleware/session-cookies';
import { needsSecondFactorForAdmin } from '../../services/mfa/policy';
import * as auth from '../../services/auth.service';
import { emailSignInEnabled } from '../../services/email-sign-in.service';
import { approveAuthorization, denyAuthorization, getConsentInfo } from '../../services/oauth/consent.service';
import { resolveReturnTo } from '../../services/oauth/return-to';
import type { Principal } from '../../services/principal';
import { adminRank } from '../../services/rbac-policy';
import { signInTargetOf } from '../../services/oauth/sign-in-context';
import { renderConsentPage, renderOAuthErrorPage } from '../../views/consent';
import { pageEnv } from '../../views/env';
import { renderLoginPage, renderSignedInPage, renderSignedOutPage } from '../../views/login';
import { requestMeta } from '../shared';
import { declareRouter, route } from '../route';
import type { RouteDeps } from '../types';
import { describeScopes } from './page-messages';
import { hostedPage, optionalText, PAGE, refuseForm, text } from './page-kit';
import { enrolUrlFor, federationOnLoginPage, finishSignIn, secondStepPage } from './sign-in-flow';
import type { ServiceContext } from '../../services/context';

/** Where the browser goes after consent, as a reader recognises it: the host, or a native app's private-use scheme. */
function redirectHostOf(redirectUri: string): string {
  try {
    const url = new URL(redirectUri);
    return url.host || url.protocol.replace(/:$/, '');
  } catch {
    return redirectUri;
  }
}

/** Only the user's own first-party browser session counts on these pages. */
function firstParty(principal: Principal | undefined): Principal | undefined {
  return principal && !principal.clientId ? principal : undefined;
}

/**
 * A pending request's id is a UUID. Anything else is answered with the expired page before it can be echoed anywhere:
 * the signed-out branch puts the id into the login page's return_to, and an unbounded form field would make a
 * Location header as long as the request body (a 90 kB header that proxies refuse).
 */
const requestIdField = { request_id: text(64) };
/** CONTRACT §15: the `ui_locales` of the authorize request rides along on the consent page and its form. */
const uiLocalesField = { ui_locales: optionalText(256) };

/** /login, /logout and /consent: server-rendered, no JavaScript, 303 after every post (CONTRACT §5). */
export function createOAuthPagesRouter(deps: RouteDeps) {
  const { config } = deps.ctx;
  const loginUrlFor = (returnTo: string) => `${config.baseUrl}/login?${new URLSearchParams({ return_to: returnTo })}`;
  const consentUrlFor = (requestId: string, uiLocales?: string) =>
    `${config.baseUrl}/consent?${new URLSearchParams({ request_id: requestId, ...(uiLocales ? { ui_locales: uiLocales } : {}) })}`;
  const page = { ...PAGE, response: { description: 'HTML page', kind: 'html' } } as const;
  /**
   * What the sign-in page says around the form (the application it is for, whether sign-up is offered) and where its
   * forms end after the redirects (CSP form-action).
   */
  const signInContext = async (ctx: ServiceContext, returnTo: string | undefined) => {
    const { application, formTargets } = await signInTargetOf(ctx, returnTo);
    return {
      formTargets,
      context: { application, registerLink: auth.registrationOpen(ctx.settings.current.values), emailSignIn: emailSignInEnabled(ctx) },
    };
  };

  return declareRouter(deps, [
    // A person who opens the base address lands on the sign-in page.
    route(
      { ...page, method: 'get', path: '/', summary: 'The base address: to the sign-in page', auth: 'none', noStore: false },
      () => new Redirect('/login', undefined, 302),
    ),

    route(
      {
        ...page,
        method: 'get',
        path: '/login',
        summary: 'Sign-in page',
        auth: 'browser',
        query: z.object({ return_to: optionalText(), login_hint: optionalText(254) }),
      },
      async ({ query, principal, ctx }, req) => {
        const returnTo = query.return_to;
        const signedIn = firstParty(principal);
        if (signedIn && needsSecondFactorForAdmin(ctx.settings.current.values, signedIn)) {
          return new Redirect(enrolUrlFor(resolveReturnTo(config, returnTo)));
        }
        if (signedIn && !returnTo) {
          const consoleLink = adminRank(signedIn.roleNames) > 0;
          return hostedPage(({ csrf }) => renderSignedInPage({ email: signedIn.email, csrf, consoleLink }));
        }
        // OIDC login_hint (CONTRACT §9) prefills the email field; it is only ever shown back, escaped.
        const federation = await federationOnLoginPage(ctx, req, returnTo);
        const { context, formTargets } = await signInContext(ctx, returnTo);
        const email = query.login_hint?.trim();
        return hostedPage(
          ({ csrf }) => renderLoginPage({ csrf, returnTo, email, signedInAs: signedIn?.email, ...context, ...federation }),
          200,
          formTargets,
        );
      },
    ),

    // The form checks passwords like POST /api/auth/login, so it spends the same per-IP budget: the per-address
    // throttle alone does not slow one password tried against many addresses.
    route(
      {
        ...page,
        method: 'post',
        path: '/login',
        summary: 'Sign in (form post)',
        auth: 'none',
        rateLimit: true,
        csrf: refuseForm,
        body: z.object({ return_to: optionalText(4096), email: text(), password: text() }),
      },
      async ({ body, env, ctx }, req) => {
        const returnTo = body.return_to;
        const email = body.email.trim().slice(0, 254);
        const password = body.password;
        const { t } = env;
        const { context, formTargets } = await signInContext(ctx, returnTo);
        const again = (status: number, error: string, more?: Awaited<ReturnType<typeof federationOnLoginPage>>) =>
          hostedPage(({ csrf }) => renderLoginPage({ csrf, returnTo, email, error, ...context, ...more }), status, formTargets);
        if (!email || !password) return again(400, t.login.missing);
        try {
          const result = await auth.login(ctx, { email, password: password.slice(0, 1024) }, requestMeta(req));
          if (result.mfaRequired) return secondStepPage(result, returnTo, { application: context.application, formTargets });
          return await finishSignIn(ctx, req, result, returnTo);
        } catch (err) {
          if (err instanceof AppError && err.code === 'invalid_credentials') {
            // CONTRACT §4: the same answer whether the email, the password or the account state was wrong.
            return again(401, t.login.incorrect, await federationOnLoginPage(ctx, req, returnTo));
          }
          if (err instanceof AppError && err.code === 'too_many_attempts') {
            return again(429, t.errors.tooManySignIns).withHeaders(err.headers);
          }
          throw err;
        }
      },
    ),

    /** Signing out of the SSO session from the browser: the session is revoked and both cookies cleared. */
    route(
      { ...page, method: 'post', path: '/logout', summary: 'Sign out (form post)', auth: 'browser', csrf: refuseForm },
      async ({ principal, ctx }) => {
        const signedIn = firstParty(principal);
        if (signedIn) await auth.logout(ctx, signedIn.sessionId);
        return new Redirect('/logout').withCookies(...clearedSessionCookies(config));
      },
    ),

    route({ ...page, method: 'get', path: '/logout', summary: 'Signed-out page', auth: 'none' }, () => hostedPage(renderSignedOutPage)),

    route(
      {
        ...page,
        method: 'get',
        path: '/consent',
        summary: 'Consent page',
        auth: 'browser',
        query: z.object({ ...requestIdField, ...uiLocalesField }),
      },
      async ({ query, principal, env, ctx }) => {
        const requestId = query.request_id;
        if (!UUID_PATTERN.test(requestId)) return expiredPage();
        const signedIn = firstParty(principal);
        if (!signedIn) return new Redirect(loginUrlFor(consentUrlFor(requestId, query.ui_locales)));
        if (needsSecondFactorForAdmin(ctx.settings.current.values, signedIn)) {
          return new Redirect(enrolUrlFor(consentUrlFor(requestId, query.ui_locales)));
        }
        const info = await getConsentInfo(ctx, signedIn, requestId).catch(notFoundAsUndefined);
        if (!info) return expiredPage();
        return hostedPage(
          ({ csrf }) =>
            renderConsentPage({
              csrf,
              requestId: info.request.id,
              clientName: info.client.name,
              clientHost: info.client.registration === 'metadata_document' ? new URL(info.client.clientId).host : undefined,
              scopes: describeScopes(env.t, info.scopes),
              resources: info.resources,
              userEmail: signedIn.email,
              uiLocales: query.ui_locales,
              unreviewed: info.client.registration === 'dynamic' ? { redirectHost: redirectHostOf(info.request.redirectUri) } : undefined,
            }),
          200,
          // Approve and deny both end at the request's redirect URI (checked by /authorize when the request was stored).
          [info.request.redirectUri],
        );
      },
    ),

    route(
      {
        ...page,
        method: 'post',
        path: '/consent',
        rateLimit: true,
        summary: 'Approve or deny (form post)',
        auth: 'browser',
        csrf: refuseForm,
        body: z.object({ ...requestIdField, ...uiLocalesField, decision: text() }),
      },
      async ({ body, principal, env, ctx }) => {
        const requestId = body.request_id;
        if (!UUID_PATTERN.test(requestId)) return expiredPage();
        const signedIn = firstParty(principal);
        if (!signedIn) return new Redirect(loginUrlFor(consentUrlFor(requestId, body.ui_locales)));
        const { decision } = body;
        if (decision !== 'approve' && decision !== 'deny') {
          const { consent } = env.t;
          return hostedPage(() => renderOAuthErrorPage({ title: consent.noDecisionTitle, message: consent.noDecision }), 400);
        }
        const act = decision === 'approve' ? approveAuthorization : denyAuthorization;
        const redirectUrl = await act(ctx, signedIn, requestId).catch(notFoundAsUndefined);
        return redirectUrl ? new Redirect(redirectUrl) : expiredPage();
      },
    ),
  ]);
}

function notFoundAsUndefined(err: unknown): undefined {
  if (err instanceof AppError && (err.code === 'not_found' || err.code === 'forbidden')) return undefined;
  throw err;
}

/** The consent request is gone (used, expired, another person's): 404. */
const expiredPage = () =>
  hostedPage(() => {
    const { t } = pageEnv();
    return renderOAuthErrorPage({ title: t.consent.expiredTitle, message: t.consent.expired });
  }, 404);

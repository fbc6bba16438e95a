import { Router, type Request, type Response } from 'express';
import { UUID_PATTERN } from '../../lib/ids';
import { csrfValid, issueCsrf } from '../../middleware/csrf';
import { clearSessionCookies, setSessionCookies } from '../../middleware/session-cookies';
import { AppError } from '../../errors';
import * as auth from '../../services/auth.service';
import { approveAuthorization, denyAuthorization, getConsentInfo } from '../../services/oauth/consent.service';
import { resolveReturnTo } from '../../services/oauth/return-to';
import { SCOPE_DESCRIPTIONS } from '../../services/oauth/scopes';
import type { Principal } from '../../services/principal';
import { renderConsentPage, renderOAuthErrorPage } from '../../views/consent';
import { renderLoginPage, renderSignedInPage, renderSignedOutPage } from '../../views/login';
import { requestMeta } from '../auth/auth.router';
import type { RouteDeps } from '../types';


function field(req: Request, name: string): string | undefined {
  const value: unknown = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : undefined;
}

function queryField(req: Request, name: string): string | undefined {
  const value: unknown = (req.query as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}

function html(res: Response, status: number, body: string): void {
  res.status(status).type('html').send(body);
}

function refuseCsrf(res: Response): void {
  html(res, 403, renderOAuthErrorPage({ title: 'Request refused', message: 'This form has expired or was not sent from this site. Reload the page and try again.' }));
}

/** Only the user's own first-party browser session counts on these pages. */
function firstParty(req: Request): Principal | undefined {
  return req.principal && !req.principal.clientId ? req.principal : undefined;
}

/** /login and /consent: server-rendered, no JavaScript, 303 after every post (CONTRACT §5). */
export function createOAuthPagesRouter({ ctx, authenticate }: RouteDeps): Router {
  const router = Router();
  const { config } = ctx;
  const browserSession = authenticate({ optional: true, refreshFromCookie: true });
  const loginUrlFor = (returnTo: string) => `${config.baseUrl}/login?${new URLSearchParams({ return_to: returnTo })}`;
  const consentUrlFor = (requestId: string) => `${config.baseUrl}/consent?${new URLSearchParams({ request_id: requestId })}`;

  router.use(['/login', '/consent', '/logout'], (_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    next();
  });

  router.get('/login', browserSession, (req, res) => {
    const csrf = issueCsrf(req, res, config);
    const returnTo = queryField(req, 'return_to');
    const principal = firstParty(req);
    if (principal && !returnTo) return html(res, 200, renderSignedInPage({ email: principal.email, csrf }));
    html(res, 200, renderLoginPage({ csrf, returnTo, signedInAs: principal?.email }));
  });

  router.post('/login', async (req, res) => {
    const returnTo = field(req, 'return_to')?.slice(0, 4096);
    if (!csrfValid(req, config)) return refuseCsrf(res);
    const csrf = issueCsrf(req, res, config);
    const email = field(req, 'email')?.trim().slice(0, 254) ?? '';
    const password = field(req, 'password') ?? '';
    if (!email || !password) {
      return html(res, 400, renderLoginPage({ csrf, returnTo, email, error: 'Enter your email address and password.' }));
    }
    try {
      const { tokens } = await auth.login(ctx, { email, password: password.slice(0, 1024) }, requestMeta(req));
      setSessionCookies(res, config, tokens);
      // Open-redirect defence: anything not allow-listed ends on the neutral signed-in page (GET /login).
      return res.redirect(303, resolveReturnTo(config, returnTo) ?? '/login');
    } catch (err) {
      if (err instanceof AppError && err.code === 'invalid_credentials') {
        // CONTRACT §4: the same answer whether the email, the password or the account state was wrong.
        return html(res, 401, renderLoginPage({ csrf, returnTo, email, error: 'Incorrect email or password.' }));
      }
      if (err instanceof AppError && err.code === 'too_many_attempts') {
        if (err.headers) res.set(err.headers);
        return html(res, 429, renderLoginPage({ csrf, returnTo, email, error: 'Too many failed sign-in attempts for this address. Wait a few minutes and try again.' }));
      }
      throw err;
    }
  });

  /** Signing out of the SSO session from the browser: the session is revoked and both cookies cleared. */
  router.post('/logout', browserSession, async (req, res) => {
    if (!csrfValid(req, config)) return refuseCsrf(res);
    const principal = firstParty(req);
    if (principal) await auth.logout(ctx, principal.sessionId);
    clearSessionCookies(res, config);
    res.redirect(303, '/logout');
  });

  router.get('/logout', (_req, res) => html(res, 200, renderSignedOutPage()));

  router.get('/consent', browserSession, async (req, res) => {
    const requestId = queryField(req, 'request_id') ?? '';
    const principal = firstParty(req);
    if (!principal) return res.redirect(303, loginUrlFor(consentUrlFor(requestId)));
    const csrf = issueCsrf(req, res, config);
    const info = UUID_PATTERN.test(requestId) ? await getConsentInfo(ctx, principal, requestId).catch(notFoundAsUndefined) : undefined;
    if (!info) return html(res, 404, expiredPage());
    html(
      res,
      200,
      renderConsentPage({
        csrf,
        requestId: info.request.id,
        clientName: info.client.name,
        scopes: info.scopes.map((scope) => ({ scope, description: SCOPE_DESCRIPTIONS[scope] ?? scope })),
        userEmail: principal.email,
      }),
    );
  });

  router.post('/consent', browserSession, async (req, res) => {
    if (!csrfValid(req, config)) return refuseCsrf(res);
    const requestId = field(req, 'request_id') ?? '';
    const principal = firstParty(req);
    if (!principal) return res.redirect(303, loginUrlFor(consentUrlFor(requestId)));
    if (!UUID_PATTERN.test(requestId)) return html(res, 404, expiredPage());
    const decision = field(req, 'decision');
    if (decision !== 'approve' && decision !== 'deny') {
      return html(res, 400, renderOAuthErrorPage({ title: 'Choose Approve or Deny', message: 'The form was sent without a decision.' }));
    }
    const act = decision === 'approve' ? approveAuthorization : denyAuthorization;
    const redirectUrl = await act(ctx, principal, requestId).catch(notFoundAsUndefined);
    if (!redirectUrl) return html(res, 404, expiredPage());
    res.redirect(303, redirectUrl);
  });

  return router;
}

function notFoundAsUndefined(err: unknown): undefined {
  if (err instanceof AppError && (err.code === 'not_found' || err.code === 'forbidden')) return undefined;
  throw err;
}

function expiredPage(): string {
  return renderOAuthErrorPage({
    title: 'This request has expired',
    message: 'The authorization request does not exist, was already answered, or has expired.',
  });
}


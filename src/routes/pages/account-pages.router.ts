import type { Request, Response } from 'express';
import { z } from 'zod';
import { pageEnvOf } from '../../middleware/page-env';
import { InvalidLinkError } from '../../errors';
import { issueCsrf } from '../../middleware/csrf';
import { clearSessionCookies } from '../../middleware/session-cookies';
import { normalizeEmail } from '../../services/auth.service';
import * as links from '../../services/email-links.service';
import { minPasswordLength, PasswordRefused } from '../../services/password-policy';
import type { Principal } from '../../services/principal';
import { renderForgotPasswordForm, renderForgotPasswordSent } from '../../views/forgot-password';
import { renderSetPasswordDone, renderSetPasswordForm, renderSetPasswordInvalid } from '../../views/set-password';
import { renderFormExpired, renderVerifyEmailDone, renderVerifyEmailForm, renderVerifyEmailInvalid } from '../../views/verify-email';
import { emailField, passwordField } from '../common.schemas';
import { declareRouter, route } from '../route';
import type { RouteDeps } from '../types';
import { passwordProblem, passwordRefusalText } from './page-messages';
import { html, optionalText, PAGE, requireCsrf, text } from './page-kit';

/** Runs `action`; a link that is invalid, expired or used answers `invalidPage` with 400 instead. */
async function orInvalidLink<T>(action: () => Promise<T>): Promise<T | undefined> {
  try {
    return await action();
  } catch (err) {
    if (err instanceof InvalidLinkError) return undefined;
    throw err;
  }
}

/** The signed-in first-party user of a page request (client tokens never sign a browser in here). */
function firstPartyUserId(principal: Principal | undefined): string | undefined {
  return principal && !principal.clientId ? principal.userId : undefined;
}

/** /verify-email, /set-password, /forgot-password: server-rendered, no JavaScript, posts answered with 303 (CONTRACT §5). */
export function createAccountPagesRouter(deps: RouteDeps) {
  const { ctx } = deps;
  const page = { ...PAGE, auth: 'none', response: { description: 'HTML page', kind: 'html' } } as const;
  const expired = (path: string) => requireCsrf(() => renderFormExpired(path));
  /** CONTRACT §8: confirming a never-verified account from a browser not signed in as it means choosing a password. */
  const choosePasswordInstead = (req: Request, res: Response, email: string, token: string) =>
    html(
      res,
      200,
      renderSetPasswordForm({
        email,
        token,
        csrf: issueCsrf(req, res, ctx.config),
        minLength: minPasswordLength(ctx),
        // In plain words why (issue 24): the person who created the account may not be the address's owner.
        intro: pageEnvOf(req).t.verify.choosePassword,
      }),
    );

  return declareRouter(deps, [
    route(
      {
        ...page,
        auth: 'browser',
        method: 'get',
        path: '/verify-email',
        summary: 'Confirm an email address',
        query: z.object({ token: text(), verified: optionalText() }),
      },
      async ({ query, principal }, req, res) => {
        if (query.verified === '1') return html(res, 200, renderVerifyEmailDone());
        const link = await orInvalidLink(() => links.inspectEmailLink(ctx, query.token, { signedInUserId: firstPartyUserId(principal) }));
        if (!link || link.purpose !== 'verify_email') return html(res, 400, renderVerifyEmailInvalid());
        if (link.needsPassword) return choosePasswordInstead(req, res, link.email, query.token);
        html(res, 200, renderVerifyEmailForm({ email: link.email, token: query.token, csrf: issueCsrf(req, res, ctx.config) }));
      },
    ),

    route(
      {
        ...page,
        auth: 'browser',
        rateLimit: true,
        method: 'post',
        path: '/verify-email',
        summary: 'Confirm an email address (form post)',
        csrf: expired('/verify-email'),
        body: z.object({ token: text() }),
      },
      async ({ body, principal }, req, res) => {
        const signedInUserId = firstPartyUserId(principal);
        const result = await orInvalidLink(() => links.confirmEmailWithLink(ctx, body.token, { signedInUserId }));
        if (!result) return html(res, 400, renderVerifyEmailInvalid());
        if (!result.confirmed) return choosePasswordInstead(req, res, result.email, body.token);
        // Every session of the account was just ended: drop this browser's dead cookies when they were its own.
        if (signedInUserId === result.userId) clearSessionCookies(res, ctx.config);
        res.redirect(303, '/verify-email?verified=1');
      },
    ),

    route(
      {
        ...page,
        method: 'get',
        path: '/set-password',
        summary: 'Choose a password from an email link',
        query: z.object({ token: text(), done: optionalText() }),
      },
      async ({ query }, req, res) => {
        if (query.done === '1') return html(res, 200, renderSetPasswordDone());
        const link = await orInvalidLink(() => links.inspectEmailLink(ctx, query.token));
        if (!link) return html(res, 400, renderSetPasswordInvalid());
        html(
          res,
          200,
          renderSetPasswordForm({
            email: link.email,
            token: query.token,
            csrf: issueCsrf(req, res, ctx.config),
            minLength: minPasswordLength(ctx),
          }),
        );
      },
    ),

    route(
      {
        ...page,
        method: 'post',
        path: '/set-password',
        rateLimit: true,
        summary: 'Choose a password (form post)',
        csrf: expired('/set-password'),
        body: z.object({ token: text(), password: text(), password_confirm: text() }),
      },
      async ({ body, env }, req, res) => {
        const { token, password } = body;
        const link = await orInvalidLink(() => links.inspectEmailLink(ctx, token));
        if (!link) return html(res, 400, renderSetPasswordInvalid());

        const checked = passwordField.safeParse(password);
        const problem = !checked.success
          ? passwordProblem(env.t, password)
          : password !== body.password_confirm
            ? env.t.setPassword.mismatch
            : undefined;
        if (problem) {
          const csrf = issueCsrf(req, res, ctx.config);
          return html(
            res,
            400,
            renderSetPasswordForm({ email: link.email, token, csrf, minLength: minPasswordLength(ctx), error: problem }),
          );
        }

        let done: { email: string } | undefined;
        try {
          done = await orInvalidLink(() => links.setPasswordWithLink(ctx, token, password));
        } catch (err) {
          if (!(err instanceof PasswordRefused)) throw err;
          const csrf = issueCsrf(req, res, ctx.config);
          const error = passwordRefusalText(env.t, err);
          return html(res, 400, renderSetPasswordForm({ email: link.email, token, csrf, minLength: minPasswordLength(ctx), error }));
        }
        if (!done) return html(res, 400, renderSetPasswordInvalid());
        // Every session of the account was just revoked: drop this browser's now-dead SSO cookies too.
        clearSessionCookies(res, ctx.config);
        res.redirect(303, '/set-password?done=1');
      },
    ),

    route(
      {
        ...page,
        method: 'get',
        path: '/forgot-password',
        summary: 'Ask for a set-password link',
        query: z.object({ sent: optionalText() }),
      },
      ({ query }, req, res) => {
        if (query.sent === '1') return html(res, 200, renderForgotPasswordSent());
        html(res, 200, renderForgotPasswordForm({ csrf: issueCsrf(req, res, ctx.config) }));
      },
    ),

    route(
      {
        ...page,
        rateLimit: true,
        method: 'post',
        path: '/forgot-password',
        summary: 'Ask for a set-password link (form post)',
        csrf: expired('/forgot-password'),
        body: z.object({ email: text() }),
      },
      async ({ body, env }, req, res) => {
        const email = emailField.safeParse(body.email);
        if (!email.success) {
          const csrf = issueCsrf(req, res, ctx.config);
          return html(res, 400, renderForgotPasswordForm({ csrf, email: body.email, error: env.t.forgot.invalid }));
        }
        await links.requestPasswordReset(ctx, normalizeEmail(email.data));
        res.redirect(303, '/forgot-password?sent=1');
      },
    ),
  ]);
}

import { z } from 'zod';
import { InvalidLinkError } from '../../errors';
import { Redirect } from '../../http/outcome';
import { clearedSessionCookies } from '../../middleware/session-cookies';
import { normalizeEmail } from '../../services/auth.service';
import * as links from '../../services/email-links.service';
import { minPasswordLength, PasswordRefused } from '../../services/password-policy';
import type { Principal } from '../../services/principal';
import { renderForgotPasswordForm, renderForgotPasswordSent } from '../../views/forgot-password';
import { renderSetPasswordDone, renderSetPasswordForm, renderSetPasswordInvalid } from '../../views/set-password';
import { renderFormExpired, renderVerifyEmailDone, renderVerifyEmailForm, renderVerifyEmailInvalid } from '../../views/verify-email';
import { emailField, passwordField } from '../../wire/common.schemas';
import { declareRouter, route } from '../route';
import type { RouteDeps } from '../types';
import { passwordProblem, passwordRefusalText } from './page-messages';
import { hostedPage, optionalText, PAGE, requireCsrf, text } from './page-kit';

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
  const app = deps.ctx;
  const page = { ...PAGE, auth: 'none', response: { description: 'HTML page', kind: 'html' } } as const;
  const expired = (path: string) => requireCsrf(() => renderFormExpired(path));
  /** CONTRACT §8: confirming a never-verified account from a browser not signed in as it means choosing a password. */
  const choosePasswordInstead = (intro: string, email: string, token: string) =>
    hostedPage(({ csrf }) =>
      // In plain words why (issue 24): the person who created the account may not be the address's owner.
      renderSetPasswordForm({ email, token, csrf, minLength: minPasswordLength(app), intro }),
    );
  const invalid = (render: () => string) => hostedPage(render, 400);

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
      async ({ query, principal, env, ctx }) => {
        if (query.verified === '1') return hostedPage(renderVerifyEmailDone);
        const link = await orInvalidLink(() => links.inspectEmailLink(ctx, query.token, { signedInUserId: firstPartyUserId(principal) }));
        if (!link || link.purpose !== 'verify_email') return invalid(renderVerifyEmailInvalid);
        if (link.needsPassword) return choosePasswordInstead(env.t.verify.choosePassword, link.email, query.token);
        return hostedPage(({ csrf }) => renderVerifyEmailForm({ email: link.email, token: query.token, csrf }));
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
      async ({ body, principal, env, ctx }) => {
        const signedInUserId = firstPartyUserId(principal);
        const result = await orInvalidLink(() => links.confirmEmailWithLink(ctx, body.token, { signedInUserId }));
        if (!result) return invalid(renderVerifyEmailInvalid);
        if (!result.confirmed) return choosePasswordInstead(env.t.verify.choosePassword, result.email, body.token);
        // Every session of the account was just ended: drop this browser's dead cookies when they were its own.
        const done = new Redirect('/verify-email?verified=1');
        return signedInUserId === result.userId ? done.withCookies(...clearedSessionCookies(ctx.config)) : done;
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
      async ({ query, ctx }) => {
        if (query.done === '1') return hostedPage(renderSetPasswordDone);
        const link = await orInvalidLink(() => links.inspectEmailLink(ctx, query.token));
        if (!link) return invalid(renderSetPasswordInvalid);
        return hostedPage(({ csrf }) =>
          renderSetPasswordForm({ email: link.email, token: query.token, csrf, minLength: minPasswordLength(ctx) }),
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
      async ({ body, env, ctx }) => {
        const { token, password } = body;
        const link = await orInvalidLink(() => links.inspectEmailLink(ctx, token));
        if (!link) return invalid(renderSetPasswordInvalid);
        const again = (error: string) =>
          hostedPage(
            ({ csrf }) => renderSetPasswordForm({ email: link.email, token, csrf, minLength: minPasswordLength(ctx), error }),
            400,
          );

        const checked = passwordField.safeParse(password);
        const problem = !checked.success
          ? passwordProblem(env.t, password)
          : password !== body.password_confirm
            ? env.t.setPassword.mismatch
            : undefined;
        if (problem) return again(problem);

        let done: { email: string } | undefined;
        try {
          done = await orInvalidLink(() => links.setPasswordWithLink(ctx, token, password));
        } catch (err) {
          if (!(err instanceof PasswordRefused)) throw err;
          return again(passwordRefusalText(env.t, err));
        }
        if (!done) return invalid(renderSetPasswordInvalid);
        // Every session of the account was just revoked: drop this browser's now-dead SSO cookies too.
        return new Redirect('/set-password?done=1').withCookies(...clearedSessionCookies(ctx.config));
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
      ({ query }) => {
        if (query.sent === '1') return hostedPage(renderForgotPasswordSent);
        return hostedPage(({ csrf }) => renderForgotPasswordForm({ csrf }));
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
      async ({ body, env, ctx }) => {
        const email = emailField.safeParse(body.email);
        if (!email.success)
          return hostedPage(({ csrf }) => renderForgotPasswordForm({ csrf, email: body.email, error: env.t.forgot.invalid }), 400);
        await links.requestPasswordReset(ctx, normalizeEmail(email.data));
        return new Redirect('/forgot-password?sent=1');
      },
    ),
  ]);
}

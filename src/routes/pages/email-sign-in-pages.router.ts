import type { Request, Response } from 'express';
import { z } from 'zod';
import { AppError, InvalidLinkError } from '../../errors';
import { issueCsrf } from '../../middleware/csrf';
import * as auth from '../../services/auth.service';
import * as emailSignIn from '../../services/email-sign-in.service';
import { signInTargetOf } from '../../services/oauth/sign-in-context';
import { renderEmailCodePage, renderEmailLinkConfirmPage, renderEmailLinkInvalid } from '../../views/email-sign-in';
import { renderLoginPage, renderSecondStepPage } from '../../views/login';
import { browserSecretFor, browserSecretOf } from '../auth/email-sign-in.router';
import { emailField } from '../common.schemas';
import { declareRouter, route } from '../route';
import { requestMeta } from '../shared';
import type { RouteDeps } from '../types';
import { html, optionalText, PAGE, refuseForm, text } from './page-kit';
import { federationOnLoginPage, finishSignIn } from './sign-in-flow';

/**
 * Sign-in by email on the hosted pages (docs/passwords.md), the pages of POST /api/auth/login/email and
 * /login/email/verify through the same service: "Email me a sign-in link" on /login posts here, the code page follows,
 * and the mailed link `/login/email?token=` signs in the browser that asked at once and asks any other first.
 */
export function createEmailSignInPagesRouter(deps: RouteDeps) {
  const { ctx } = deps;
  const { config } = ctx;
  const page = { ...PAGE, response: { description: 'HTML page', kind: 'html' } } as const;
  const enabled = () => {
    emailSignIn.assertEmailSignInEnabled(ctx);
  };

  /** A finished email sign-in: the second step for an account with a factor, else the SSO cookies and the destination. */
  const finish = async (req: Request, res: Response, outcome: emailSignIn.EmailSignInOutcome, returnTo: string | undefined) => {
    if (outcome.mfaRequired) {
      const csrf = issueCsrf(req, res, config);
      const { application, formTargets } = await signInTargetOf(ctx, returnTo);
      const page = renderSecondStepPage({ csrf, returnTo, mfaToken: outcome.mfaToken, methods: outcome.methods, application });
      return html(res, 200, page, formTargets);
    }
    return finishSignIn(ctx, req, res, outcome, returnTo);
  };

  const signInWithLink = async (req: Request, res: Response, token: string) => {
    let outcome: emailSignIn.EmailSignInOutcome;
    try {
      outcome = await emailSignIn.signInWithEmailLink(ctx, token, requestMeta(req));
    } catch (err) {
      if (err instanceof InvalidLinkError) return html(res, 400, renderEmailLinkInvalid());
      throw err;
    }
    return finish(req, res, outcome, outcome.returnTo);
  };

  return declareRouter(deps, [
    route(
      {
        ...page,
        method: 'post',
        path: '/login/email',
        summary: 'Email me a sign-in link (form post from /login)',
        auth: 'none',
        rateLimit: true,
        csrf: refuseForm,
        body: z.object({ return_to: optionalText(4096), email: text(300) }),
      },
      async ({ body, env }, req, res) => {
        enabled();
        const returnTo = body.return_to;
        const { t } = env;
        const email = emailField.safeParse(body.email);
        if (!email.success) {
          const csrf = issueCsrf(req, res, config);
          const federation = await federationOnLoginPage(ctx, req, returnTo);
          const { application, formTargets } = await signInTargetOf(ctx, returnTo);
          return html(
            res,
            400,
            renderLoginPage({
              csrf,
              returnTo,
              email: body.email.trim(),
              error: t.emailSignIn.emailMissing,
              application,
              registerLink: auth.registrationOpen(ctx.settings.current.values),
              emailSignIn: true,
              ...federation,
            }),
            formTargets,
          );
        }
        const browserSecret = browserSecretFor(config, res);
        await emailSignIn.requestEmailSignIn(ctx, { email: email.data, returnTo, browserSecret });
        const csrf = issueCsrf(req, res, config);
        const { application, formTargets } = await signInTargetOf(ctx, returnTo);
        html(res, 200, renderEmailCodePage({ csrf, email: auth.normalizeEmail(email.data), returnTo, application }), formTargets);
      },
    ),

    route(
      {
        ...page,
        method: 'post',
        path: '/login/email/code',
        summary: 'Sign in with the code of a sign-in email (form post)',
        auth: 'none',
        rateLimit: true,
        csrf: refuseForm,
        body: z.object({ return_to: optionalText(4096), email: text(300), code: text(32) }),
      },
      async ({ body, env }, req, res) => {
        enabled();
        const returnTo = body.return_to;
        const { t } = env;
        const again = async (status: number, error: string) => {
          const { application, formTargets } = await signInTargetOf(ctx, returnTo);
          const csrf = issueCsrf(req, res, config);
          html(res, status, renderEmailCodePage({ csrf, email: body.email.trim(), returnTo, application, error }), formTargets);
        };
        try {
          const outcome = await emailSignIn.verifyEmailSignInCode(ctx, { email: body.email, code: body.code }, requestMeta(req));
          return await finish(req, res, outcome, returnTo);
        } catch (err) {
          if (err instanceof AppError && err.code === 'invalid_credentials') return again(401, t.emailSignIn.codeInvalid);
          if (err instanceof AppError && err.code === 'too_many_attempts') {
            if (err.headers) res.set(err.headers);
            return again(429, t.errors.tooManySignIns);
          }
          throw err;
        }
      },
    ),

    route(
      {
        ...page,
        method: 'get',
        path: '/login/email',
        summary: 'The link of a sign-in email',
        auth: 'none',
        query: z.object({ token: text(256) }),
      },
      async ({ query }, req, res) => {
        enabled();
        let link: Awaited<ReturnType<typeof emailSignIn.inspectEmailSignInLink>>;
        try {
          link = await emailSignIn.inspectEmailSignInLink(ctx, query.token, browserSecretOf(config, req));
        } catch (err) {
          if (err instanceof InvalidLinkError) return html(res, 400, renderEmailLinkInvalid());
          throw err;
        }
        // The browser that asked is signed in by opening its link; any other (another device, a forwarded mail, a
        // mail scanner fetching links) gets a question first, so fetching the link signs nobody in.
        if (link.sameBrowser) return signInWithLink(req, res, query.token);
        const { formTargets } = await signInTargetOf(ctx, link.returnTo);
        html(
          res,
          200,
          renderEmailLinkConfirmPage({ csrf: issueCsrf(req, res, config), token: query.token, email: link.email }),
          formTargets,
        );
      },
    ),

    route(
      {
        ...page,
        method: 'post',
        path: '/login/email/confirm',
        summary: 'Sign in on this device with a sign-in link opened elsewhere (form post)',
        auth: 'none',
        rateLimit: true,
        csrf: refuseForm,
        body: z.object({ token: text(256) }),
      },
      async ({ body }, req, res) => {
        enabled();
        return signInWithLink(req, res, body.token);
      },
    ),
  ]);
}

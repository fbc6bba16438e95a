import type { Request } from 'express';
import { z } from 'zod';
import { AppError, InvalidLinkError } from '../../errors';
import * as auth from '../../services/auth.service';
import * as emailSignIn from '../../services/email-sign-in.service';
import { signInTargetOf } from '../../services/oauth/sign-in-context';
import { renderEmailCodePage, renderEmailLinkConfirmPage, renderEmailLinkInvalid } from '../../views/email-sign-in';
import { renderLoginPage } from '../../views/login';
import { browserSecretCookie, browserSecretOf } from '../auth/email-sign-in.router';
import { emailField } from '../../wire/common.schemas';
import { declareRouter, route } from '../route';
import { requestMeta } from '../shared';
import type { RouteDeps } from '../types';
import { hostedPage, optionalText, PAGE, refuseForm, text } from './page-kit';
import { federationOnLoginPage, finishSignIn, secondStepPage } from './sign-in-flow';
import type { ServiceContext } from '../../services/context';

/**
 * Sign-in by email on the hosted pages (docs/passwords.md), the pages of POST /api/auth/login/email and
 * /login/email/verify through the same service: "Email me a sign-in link" on /login posts here, the code page follows,
 * and the mailed link `/login/email?token=` signs in the browser that asked at once and asks any other first.
 */
export function createEmailSignInPagesRouter(deps: RouteDeps) {
  const app = deps.ctx;
  const { config } = app;
  const page = { ...PAGE, response: { description: 'HTML page', kind: 'html' } } as const;
  const enabled = () => {
    emailSignIn.assertEmailSignInEnabled(app);
  };

  /** A finished email sign-in: the second step for an account with a factor, else the SSO cookies and the destination. */
  const finish = async (ctx: ServiceContext, req: Request, outcome: emailSignIn.EmailSignInOutcome, returnTo: string | undefined) =>
    outcome.mfaRequired
      ? secondStepPage(outcome, returnTo, await signInTargetOf(ctx, returnTo))
      : finishSignIn(ctx, req, outcome, returnTo);

  const linkInvalid = () => hostedPage(renderEmailLinkInvalid, 400);

  const signInWithLink = async (ctx: ServiceContext, req: Request, token: string) => {
    let outcome: emailSignIn.EmailSignInOutcome;
    try {
      outcome = await emailSignIn.signInWithEmailLink(ctx, token, requestMeta(req));
    } catch (err) {
      if (err instanceof InvalidLinkError) return linkInvalid();
      throw err;
    }
    return finish(ctx, req, outcome, outcome.returnTo);
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
      async ({ body, env, ctx }, req) => {
        enabled();
        const returnTo = body.return_to;
        const { t } = env;
        const email = emailField.safeParse(body.email);
        const { application, formTargets } = await signInTargetOf(ctx, returnTo);
        if (!email.success) {
          const federation = await federationOnLoginPage(ctx, req, returnTo);
          return hostedPage(
            ({ csrf }) =>
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
            400,
            formTargets,
          );
        }
        const browserSecret = browserSecretCookie(config);
        await emailSignIn.requestEmailSignIn(ctx, { email: email.data, returnTo, browserSecret: browserSecret?.value });
        const shown = auth.normalizeEmail(email.data);
        const codePage = hostedPage(({ csrf }) => renderEmailCodePage({ csrf, email: shown, returnTo, application }), 200, formTargets);
        return browserSecret ? codePage.withCookies(browserSecret) : codePage;
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
      async ({ body, env, ctx }, req) => {
        enabled();
        const returnTo = body.return_to;
        const { t } = env;
        const again = async (status: number, error: string) => {
          const { application, formTargets } = await signInTargetOf(ctx, returnTo);
          const email = body.email.trim();
          return hostedPage(({ csrf }) => renderEmailCodePage({ csrf, email, returnTo, application, error }), status, formTargets);
        };
        try {
          const outcome = await emailSignIn.verifyEmailSignInCode(ctx, { email: body.email, code: body.code }, requestMeta(req));
          return await finish(ctx, req, outcome, returnTo);
        } catch (err) {
          if (err instanceof AppError && err.code === 'invalid_credentials') return again(401, t.emailSignIn.codeInvalid);
          if (err instanceof AppError && err.code === 'too_many_attempts') {
            return (await again(429, t.errors.tooManySignIns)).withHeaders(err.headers);
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
      async ({ query, ctx }, req) => {
        enabled();
        let link: Awaited<ReturnType<typeof emailSignIn.inspectEmailSignInLink>>;
        try {
          link = await emailSignIn.inspectEmailSignInLink(ctx, query.token, browserSecretOf(config, req));
        } catch (err) {
          if (err instanceof InvalidLinkError) return linkInvalid();
          throw err;
        }
        // The browser that asked is signed in by opening its link; any other (another device, a forwarded mail, a
        // mail scanner fetching links) gets a question first, so fetching the link signs nobody in.
        if (link.sameBrowser) return signInWithLink(ctx, req, query.token);
        const { formTargets } = await signInTargetOf(ctx, link.returnTo);
        const { email } = link;
        return hostedPage(({ csrf }) => renderEmailLinkConfirmPage({ csrf, token: query.token, email }), 200, formTargets);
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
      async ({ body, ctx }, req) => {
        enabled();
        return signInWithLink(ctx, req, body.token);
      },
    ),
  ]);
}

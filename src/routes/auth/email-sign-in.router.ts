import type { Request } from 'express';
import { z } from 'zod';
import type { Config } from '../../config';
import type { CookieWrite } from '../../http/outcome';
import { randomToken } from '../../lib/crypto';
import { hostCookieName, hostCookieOptions } from '../../middleware/host-cookies';
import * as emailSignIn from '../../services/email-sign-in.service';
import { emailField, successBody } from '../../wire/common.schemas';
import { reply, route, routerOf } from '../route';
import { requestMeta, signedInOrSecondStep } from '../shared';
import { authResult, mfaRequiredBody } from '../../wire/auth/auth.schemas';

/**
 * The cookie that tells the browser which asked for a sign-in email from any other (docs/passwords.md,
 * docs/security.md): `__Host-email_sign_in`, which a sibling subdomain cannot plant (host-cookies.ts). Without
 * COOKIE_SECURE there is none, and every link asks "Sign in on this device?" first.
 */
export const EMAIL_SIGN_IN_COOKIE = 'email_sign_in';
const COOKIE_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/**
 * The requesting browser's secret as a cookie to set (10 minutes): always a new one minted here, since an incoming value
 * is never reused (whoever planted it knows it). Undefined when the binding cannot be trusted (no `__Host-` cookie
 * possible): the request is then bound to no browser and its link always asks first.
 */
export function browserSecretCookie(config: Readonly<Config>): (CookieWrite & { value: string }) | undefined {
  const name = hostCookieName(config, EMAIL_SIGN_IN_COOKIE);
  if (!name) return undefined;
  return { name, value: randomToken(32), options: hostCookieOptions(emailSignIn.EMAIL_SIGN_IN_TTL_SECONDS * 1000) };
}

/** The `__Host-` cookie of the browser that opens a link, if any (a plain `email_sign_in` cookie counts for nothing). */
export function browserSecretOf(config: Readonly<Config>, req: Request): string | undefined {
  const name = hostCookieName(config, EMAIL_SIGN_IN_COOKIE);
  const value: unknown = name ? req.cookies?.[name] : undefined;
  return typeof value === 'string' && COOKIE_SHAPE.test(value) ? value : undefined;
}

export const emailSignInRequestBody = z
  .object({ email: emailField, return_to: z.string().max(4096).optional() })
  .transform((b) => ({ email: b.email, returnTo: b.return_to }));

export const emailSignInVerifyBody = z.object({
  email: emailField,
  code: z.string({ error: 'code is required' }).trim().min(1, 'code is required').max(32, 'code is too long'),
});

/** Sign-in by email (setting `email_sign_in`): the request, and the code typed on a page or an app. */
export const createEmailSignInRouter = routerOf(
  () => [
    route(
      {
        method: 'post',
        path: '/login/email',
        summary: 'Email me a sign-in link and code',
        description:
          'Always 202 with the same body, whether or not the address has an account. An active account with a verified address ' +
          'gets one mail (in the language of the request) with a single-use link and a 6-digit code, both valid 10 minutes; a new ' +
          'request replaces the previous one. With COOKIE_SECURE, sets a new `__Host-email_sign_in` cookie: the link opened in ' +
          'this browser signs it in at once; another browser, or any browser without COOKIE_SECURE, gets a confirmation page ' +
          'first. 404 when the setting `email_sign_in` is off.',
        auth: 'none',
        originCheck: true,
        noStore: true,
        body: emailSignInRequestBody,
        response: { status: 202, description: '{ success: true }', schema: successBody },
        errors: [404],
      },
      async ({ body, ctx }) => {
        emailSignIn.assertEmailSignInEnabled(ctx);
        const cookie = browserSecretCookie(ctx.config);
        await emailSignIn.requestEmailSignIn(ctx, { ...body, browserSecret: cookie?.value });
        return reply(202, { success: true }).withCookies(...(cookie ? [cookie] : []));
      },
    ),
    route(
      {
        method: 'post',
        path: '/login/email/verify',
        summary: 'Sign in with the 6-digit code of a sign-in email',
        description:
          'Answers as POST /api/auth/login: tokens and cookies, or 401 mfa_required for an account with a second factor. A wrong ' +
          'code is 401 invalid_credentials and counts on the address sign-in throttle (429 too_many_attempts); five wrong codes ' +
          'end the request. The session amr is ["otp"] (plus the second factor).',
        auth: 'none',
        originCheck: true,
        noStore: true,
        body: emailSignInVerifyBody,
        response: { description: 'Signed in', schema: authResult },
        errors: [401, 404],
        errorBodies: {
          401: { description: 'invalid_credentials, or mfa_required with the mfa_token of the second step', schema: mfaRequiredBody },
        },
      },
      async ({ body, ctx }, req) => signedInOrSecondStep(ctx.config, await emailSignIn.verifyEmailSignInCode(ctx, body, requestMeta(req))),
    ),
  ],
  { tags: ['Auth'] },
);

import { createHmac, randomInt, randomUUID } from 'node:crypto';
import { withTransaction } from '../db';
import {
  consumeEmailSignIn,
  countEmailSignInFailure,
  findLiveEmailSignInByEmail,
  findLiveEmailSignInByToken,
  insertEmailSignInForAddress,
  type EmailSignInRecipient,
  type EmailSignInRow,
} from '../db/repositories/email-sign-in.repo';
import { countLoginAttempt, releaseLoginAttempt } from '../db/repositories/login-failures.repo';
import { findSignInAccount } from '../db/repositories/users.repo';
import { AppError, InvalidLinkError } from '../errors';
import { addSeconds } from '../lib/clock';
import { randomToken, safeEqual, sha256Hex } from '../lib/crypto';
import { LOGIN_THROTTLE, normalizeEmail, tooManyAttempts, type AuthResult, type SecondFactorRequired } from './auth.service';
import type { AppContext, RequestMeta, ServiceContext } from './context';
import { signInMethods } from './mfa/factors.service';
import { startSecondStep } from './mfa/mfa-token';
import { AMR } from './mfa/policy';
import { completeSignIn } from './sessions.service';
import { mailEnv } from './mail';

/** Sign-in by email (docs/passwords.md): the link and the code live 10 minutes; five wrong codes end the request. */
export const EMAIL_SIGN_IN_TTL_SECONDS = 600;
export const EMAIL_SIGN_IN_MAX_FAILURES = 5;
/** At most this many requests per account and hour (the endpoint cannot flood a mailbox). */
export const MAX_EMAIL_SIGN_INS_PER_HOUR = 5;

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{32,128}$/;
const CODE_SHAPE = /^\d{6}$/;

export type EmailSignInOutcome = (AuthResult | SecondFactorRequired) & { returnTo?: string };

/** The setting `email_sign_in` (default on). */
export function emailSignInEnabled(ctx: AppContext): boolean {
  return ctx.settings.current.values.email_sign_in;
}

/** Off: the endpoints answer 404 and /login offers nothing (as if the feature did not exist). */
export function assertEmailSignInEnabled(ctx: AppContext): void {
  if (!emailSignInEnabled(ctx)) throw new AppError('not_found', 'Sign-in by email is turned off');
}

/** The code is stored as an HMAC keyed by the server's secret and bound to its request: a copied table reveals nothing. */
function codeHashOf(ctx: ServiceContext, requestId: string, code: string): string {
  return createHmac('sha256', ctx.config.keysSecret).update(`email-sign-in:${requestId}:${code}`).digest('hex');
}

/** The hash of the random value the requesting browser keeps in its cookie. */
export function browserHashOf(secret: string): string {
  return sha256Hex(`email-sign-in-browser:${secret}`);
}

/**
 * POST /api/auth/login/email: the same answer for every address (CONTRACT: 202, nothing told). An active account with
 * a verified address gets one mail with a single-use link and a 6-digit code, both valid 10 minutes; its previous
 * request is burnt. An address never verified gets nothing: signing in by mailbox must not hand an account that
 * someone else registered with that address to either of them without the take-back of a set-password link.
 */
export async function requestEmailSignIn(
  ctx: ServiceContext,
  input: { email: string; returnTo?: string; browserSecret?: string },
): Promise<void> {
  assertEmailSignInEnabled(ctx);
  const email = normalizeEmail(input.email);
  const id = randomUUID();
  const token = randomToken(32);
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  const now = ctx.clock.now();
  const recipient = await insertEmailSignInForAddress(ctx.db, {
    id,
    email,
    tokenHash: sha256Hex(token),
    codeHash: codeHashOf(ctx, id, code),
    browserHash: input.browserSecret ? browserHashOf(input.browserSecret) : null,
    returnTo: input.returnTo ?? null,
    now,
    expiresAt: addSeconds(now, EMAIL_SIGN_IN_TTL_SECONDS),
    windowStart: addSeconds(now, -3600),
    maxPerWindow: MAX_EMAIL_SIGN_INS_PER_HOUR,
  });
  if (recipient) queueSignInMail(ctx, recipient, token, code);
}

function queueSignInMail(ctx: ServiceContext, user: EmailSignInRecipient, token: string, code: string): void {
  const url = `${ctx.config.baseUrl}/login/email?token=${encodeURIComponent(token)}`;
  const { t, brand } = mailEnv(ctx);
  const minutes = EMAIL_SIGN_IN_TTL_SECONDS / 60;
  const hello = user.firstName ? t.mail.helloName(user.firstName) : t.mail.hello;
  const intro = t.mail.emailSignInIntro(brand.name, ctx.config.baseUrl);
  const codeLine = t.mail.emailSignInCode(code);
  const validity = t.mail.emailSignInValidity(minutes);
  const warning = t.mail.emailSignInWarning;
  const footer = t.mail.footer(brand.name, ctx.config.baseUrl);
  ctx.mailer.send({
    to: user.email,
    subject: t.mail.emailSignInSubject(brand.name),
    text: `${hello}\n\n${intro}\n\n${url}\n\n${codeLine}\n\n${validity}\n\n${warning}\n\n-- \n${footer}\n`,
    html: ctx.mailHtml([hello, intro, { href: url, text: t.mail.emailSignInButton }, codeLine, validity, warning], { brand, footer }),
  });
}

/**
 * GET /login/email?token=: the live request of a link, unconsumed, and whether the browser that opens it is the one
 * that asked (its cookie's hash matches): that one is signed in at once, any other gets a confirmation page first
 * (a link forwarded, or opened by a mail scanner, signs nobody in by being fetched).
 */
export async function inspectEmailSignInLink(
  ctx: ServiceContext,
  token: string,
  browserSecret: string | undefined,
): Promise<{ email: string; sameBrowser: boolean; returnTo?: string }> {
  assertEmailSignInEnabled(ctx);
  const row = await liveByToken(ctx, token);
  const sameBrowser = Boolean(browserSecret && row.browserHash && safeEqual(browserHashOf(browserSecret), row.browserHash));
  return { email: row.email, sameBrowser, returnTo: row.returnTo ?? undefined };
}

async function liveByToken(ctx: ServiceContext, token: string): Promise<EmailSignInRow> {
  if (!TOKEN_SHAPE.test(token)) throw new InvalidLinkError();
  const row = await findLiveEmailSignInByToken(ctx.db, sha256Hex(token), ctx.clock.now(), EMAIL_SIGN_IN_MAX_FAILURES);
  if (!row) throw new InvalidLinkError();
  return row;
}

/** The link's sign-in (same browser at once, another browser after its confirmation): burns link and code. */
export async function signInWithEmailLink(ctx: ServiceContext, token: string, meta: RequestMeta): Promise<EmailSignInOutcome> {
  assertEmailSignInEnabled(ctx);
  const row = await liveByToken(ctx, token);
  const outcome = await finish(ctx, row, meta, 'link');
  if (!outcome) throw new InvalidLinkError();
  return outcome;
}

/**
 * POST /api/auth/login/email/verify { email, code }: the code typed on the page. Each attempt is counted on the
 * address's sign-in throttle before the code is compared (CONTRACT §4), so wrong codes feed the same lock as wrong
 * passwords; a wrong code also counts on the request, which ends at the fifth. Unknown address, no request, wrong or
 * used code: the same 401 invalid_credentials.
 */
export async function verifyEmailSignInCode(
  ctx: ServiceContext,
  input: { email: string; code: string },
  meta: RequestMeta,
): Promise<EmailSignInOutcome> {
  assertEmailSignInEnabled(ctx);
  const email = normalizeEmail(input.email);
  const now = ctx.clock.now();
  const attempt = await countLoginAttempt(ctx.db, email, now, LOGIN_THROTTLE);
  if (!attempt.allowed) {
    await ctx.events.record(ctx.db, { type: 'auth.login.throttled', actorId: null, detail: { email, method: 'email' } });
    throw tooManyAttempts(attempt.lockedUntil, now);
  }
  const code = input.code.trim();
  const row = await findLiveEmailSignInByEmail(ctx.db, email, now, EMAIL_SIGN_IN_MAX_FAILURES);
  const ok = row !== undefined && CODE_SHAPE.test(code) && safeEqual(codeHashOf(ctx, row.id, code), row.codeHash);
  const outcome = ok ? await finish(ctx, row, meta, 'code') : undefined;
  if (outcome) return outcome;

  const failures = row ? await countEmailSignInFailure(ctx.db, row.id, now) : 0;
  const subjectId = row?.userId ?? null;
  await ctx.events.record(ctx.db, {
    type: 'auth.login.failed',
    actorId: null,
    subjectId,
    ip: meta.ip,
    userAgent: meta.userAgent,
    detail: { email, method: 'email', reason: row ? 'bad_code' : 'no_request' },
  });
  if (attempt.failures >= LOGIN_THROTTLE.threshold || failures >= EMAIL_SIGN_IN_MAX_FAILURES) {
    await ctx.events.record(ctx.db, {
      type: 'auth.login.locked',
      actorId: null,
      subjectId,
      detail: { email, method: 'email', locked: attempt.failures >= LOGIN_THROTTLE.threshold ? 'account' : 'sign_in_attempt' },
    });
  }
  // One answer whatever happened (no request, a wrong code, the fifth wrong code): a request exists only for an active
  // account with a verified address, so a different fifth answer would tell which addresses have one.
  throw new AppError('invalid_credentials', 'The code is not valid (after five wrong codes, ask for a new sign-in email)');
}

/**
 * The request proved the mailbox: burn it (one conditional UPDATE, with the session in the same transaction), then a
 * session with amr ["otp"], or, for an account with a second factor, the second step (its mfa_token remembers the
 * first factor: the session's amr becomes ["otp", <second factor>]). Undefined when the request was used meanwhile.
 */
async function finish(
  ctx: ServiceContext,
  row: EmailSignInRow,
  meta: RequestMeta,
  via: 'link' | 'code',
): Promise<EmailSignInOutcome | undefined> {
  const now = ctx.clock.now();
  const account = await findSignInAccount(ctx.db, row.email);
  if (!account?.user.isActive) return undefined;
  const { user } = account;
  const returnTo = row.returnTo ?? undefined;
  const methods = signInMethods(account);
  if (methods.length > 0) {
    if (!(await consumeEmailSignIn(ctx.db, row.id, now, EMAIL_SIGN_IN_MAX_FAILURES))) return undefined;
    // As after a right password: the attempt counted for the code is not a failure, but earlier wrong ones stay.
    if (via === 'code') await releaseLoginAttempt(ctx.db, user.email);
    const mfaToken = await startSecondStep(ctx, user.id, meta, { methods, method: 'email' }, AMR.totp);
    return { mfaRequired: true, mfaToken, methods, returnTo };
  }
  const tokens = await withTransaction(ctx.db, async (trx) => {
    if (!(await consumeEmailSignIn(trx, row.id, now, EMAIL_SIGN_IN_MAX_FAILURES))) return undefined;
    return completeSignIn(ctx, trx, {
      user,
      meta,
      auth: { time: now, amr: [AMR.totp] },
      clearFailuresOf: user.email,
      event: { ip: meta.ip, userAgent: meta.userAgent, detail: { method: 'email', via } },
    });
  });
  if (!tokens) return undefined;
  return { user: { ...user, lastLoginAt: now }, tokens, returnTo };
}

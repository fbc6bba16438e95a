import { withTransaction, type DbOrTrx } from '../db';
import {
  burnEmailTokensOfUser,
  consumeEmailToken,
  findLiveEmailToken,
  insertEmailToken,
  insertEmailTokenForAddress,
  type EmailTokenPurpose,
  type LinkRecipient,
} from '../db/repositories/email-tokens.repo';
import { clearLoginFailures } from '../db/repositories/login-failures.repo';
import { revokeSessionsOfUser } from '../db/repositories/sessions.repo';
import { lockUser, updateUser } from '../db/repositories/users.repo';
import { InvalidLinkError } from '../errors';
import { addSeconds } from '../lib/clock';
import { randomToken, sha256Hex } from '../lib/crypto';
import type { ServiceContext } from './context';
import { assertPasswordAllowed } from './password-policy';
import { anyFactorRemoved, removeEveryFactor } from './mfa/factor-reset.service';
import { mailFactorsReset } from './mfa/notifications';
import { mailEnv } from './mail';

export type EmailLinkPurpose = EmailTokenPurpose;

interface LinkUser {
  id: string;
  email: string;
  firstName: string;
}

/**
 * Links that POST /api/auth/set-password accepts. A verification link proves control of the mailbox just as a
 * set-password link does, and spec §3 lists set-password as the transition that burns an "email link" and marks
 * the address verified, so both purposes are accepted (docs/self-service.md).
 */
export const SET_PASSWORD_PURPOSES: readonly EmailLinkPurpose[] = ['set_password', 'verify_email'];

/** Anonymous resend / forgot-password requests mint at most this many links per user, purpose and hour. */
export const MAX_ANONYMOUS_LINKS_PER_HOUR = 5;

/** Our tokens are 43 base64url characters; anything else is refused without a database lookup. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{20,128}$/;

const invalidLink = () => new InvalidLinkError();

function ttlOf(ctx: ServiceContext, purpose: EmailLinkPurpose): number {
  return purpose === 'verify_email' ? ctx.config.verifyEmailTtlSeconds : ctx.config.setPasswordTtlSeconds;
}

/**
 * Mints a 256-bit random link token for one user and one purpose; only its SHA-256 is stored (CONTRACT §4:
 * valid 24 h for verification, 1 h for set-password). Returns the raw token for the email.
 */
export async function createEmailLinkToken(ctx: ServiceContext, db: DbOrTrx, userId: string, purpose: EmailLinkPurpose): Promise<string> {
  const token = randomToken(32);
  const now = ctx.clock.now();
  await insertEmailToken(db, { tokenHash: sha256Hex(token), userId, purpose, now, expiresAt: addSeconds(now, ttlOf(ctx, purpose)) });
  return token;
}

/** Sends the address-verification link: {BASE_URL}/verify-email?token=… */
export async function sendVerificationEmail(ctx: ServiceContext, user: LinkUser): Promise<void> {
  const token = await createEmailLinkToken(ctx, ctx.db, user.id, 'verify_email');
  queueVerificationMail(ctx, user, token);
}

/** Sends a set-password link (admin invite or forgot-password): {BASE_URL}/set-password?token=… */
export async function sendSetPasswordEmail(ctx: ServiceContext, user: LinkUser, reason: 'invite' | 'reset'): Promise<void> {
  const token = await createEmailLinkToken(ctx, ctx.db, user.id, 'set_password');
  queueSetPasswordMail(ctx, user, token, reason);
}

/**
 * An invitation's set-password link (docs/rbac.md, "Invitations"): valid `invitation_ttl_hours` (a setting), which
 * the mail states; `expiresAt` is the time recorded on the user.
 */
export async function sendInvitationEmail(ctx: ServiceContext, user: LinkUser, expiresAt: Date): Promise<void> {
  const token = randomToken(32);
  await insertEmailToken(ctx.db, {
    tokenHash: sha256Hex(token),
    userId: user.id,
    purpose: 'set_password',
    now: ctx.clock.now(),
    expiresAt,
  });
  queueSetPasswordMail(ctx, user, token, 'invite', ctx.settings.current.values.invitation_ttl_hours);
}

/**
 * POST /api/auth/verify-email/resend. The answer never depends on the address: lookup and link creation are one
 * statement whether or not the address exists, and the mail is only queued (CONTRACT §4). Only an active,
 * unverified account gets a new link.
 */
export async function requestVerificationResend(ctx: ServiceContext, email: string): Promise<void> {
  const { recipient, token } = await mintForAddress(ctx, email, 'verify_email', true);
  if (recipient) queueVerificationMail(ctx, recipient, token);
}

/** POST /api/auth/forgot-password (beyond the spec): an existing active user gets a set-password link. */
export async function requestPasswordReset(ctx: ServiceContext, email: string): Promise<void> {
  const { recipient, token } = await mintForAddress(ctx, email, 'set_password', false);
  if (recipient) queueSetPasswordMail(ctx, recipient, token, 'reset');
}

async function mintForAddress(
  ctx: ServiceContext,
  email: string,
  purpose: EmailLinkPurpose,
  onlyUnverified: boolean,
): Promise<{ recipient: LinkRecipient | undefined; token: string }> {
  const token = randomToken(32);
  const now = ctx.clock.now();
  const recipient = await insertEmailTokenForAddress(ctx.db, {
    email,
    tokenHash: sha256Hex(token),
    purpose,
    now,
    expiresAt: addSeconds(now, ttlOf(ctx, purpose)),
    onlyUnverified,
    windowStart: addSeconds(now, -3600),
    maxPerWindow: MAX_ANONYMOUS_LINKS_PER_HOUR,
  });
  return { recipient, token };
}

/** POST /api/auth/verify-email: checks a link without consuming it (spec §3: the link stays unchanged). */
export async function inspectEmailLink(
  ctx: ServiceContext,
  token: string,
  confirmer: { signedInUserId?: string } = {},
): Promise<{ email: string; purpose: EmailLinkPurpose; needsPassword: boolean }> {
  if (!TOKEN_SHAPE.test(token)) throw invalidLink();
  const link = await findLiveEmailToken(ctx.db, sha256Hex(token), ctx.clock.now());
  if (!link) throw invalidLink();
  // The same rule confirmEmailWithLink applies: a never-verified account confirmed by someone not signed in as it.
  const needsPassword = link.purpose === 'verify_email' && !link.emailVerified && confirmer.signedInUserId !== link.userId;
  return { email: link.email, purpose: link.purpose, needsPassword };
}

/**
 * POST /api/auth/set-password (spec §3): sets the password, marks the address verified and burns the link in one
 * transaction; the burn is one conditional UPDATE, so a link works exactly once. Every session of the user is
 * revoked (whoever held one before the mailbox owner chose a password, e.g. an attacker who registered the
 * address first, is signed out), every other outstanding link is burned, and the login throttle is cleared.
 */
export async function setPasswordWithLink(ctx: ServiceContext, token: string, password: string): Promise<{ email: string }> {
  if (!TOKEN_SHAPE.test(token)) throw invalidLink();
  const tokenHash = sha256Hex(token);
  // Cheap pre-check so that a bad link does not cost a bcrypt hash; the consuming UPDATE below decides.
  const live = await findLiveEmailToken(ctx.db, tokenHash, ctx.clock.now());
  if (!live || !SET_PASSWORD_PURPOSES.includes(live.purpose)) throw invalidLink();
  await assertPasswordAllowed(ctx, password, { email: live.email });
  const passwordHash = await ctx.passwords.hash(password);
  const now = ctx.clock.now();
  const result = await withTransaction(ctx.db, async (trx) => {
    // Lock order users -> factor tables -> email_tokens -> sessions -> login_failures (docs/security.md).
    const user = await lockUser(trx, live.userId);
    const link = await consumeEmailToken(trx, tokenHash, SET_PASSWORD_PURPOSES, now);
    if (!link || !user) throw invalidLink();
    // An invitation is accepted with its password (docs/rbac.md, "Invitations").
    await updateUser(trx, link.userId, { passwordHash, emailVerified: true, invitationExpiresAt: null }, now);
    // CONTRACT §11: the mailbox owner takes back an address someone else registered; whatever factor that
    // registrant enrolled (a passkey signs in on its own) goes with the registrant's password and sessions.
    const removed = user.emailVerified
      ? undefined
      : await removeEveryFactor(ctx, trx, link.userId, {
          via: 'set_password_link',
          actorId: link.userId,
        });
    await burnEmailTokensOfUser(trx, link.userId, ['verify_email', 'set_password'], now);
    await revokeSessionsOfUser(trx, link.userId, now);
    await clearLoginFailures(trx, link.email);
    await ctx.events.record(trx, {
      type: 'auth.password.reset',
      actorId: link.userId,
      subjectId: link.userId,
      detail: { link: link.purpose },
    });
    return { link, user, removed };
  });
  if (result.removed && anyFactorRemoved(result.removed)) mailFactorsReset(ctx, result.user, result.removed, 'set_password_link');
  return { email: result.link.email };
}

export type ConfirmEmailResult =
  { confirmed: true; email: string; userId: string } | { confirmed: false; needsPassword: true; email: string };

/**
 * Marks the address verified from a verification link and burns it (the /verify-email page's confirm button and
 * POST /api/auth/verify-email/confirm). Whoever controls the mailbox wins the account (CONTRACT §8):
 * - every session of the account ends, so a registrant who signed up with someone else's address is signed out
 *   the moment the owner confirms it;
 * - an account that was never verified, confirmed from a browser not signed in as it, is NOT verified with the
 *   registrant's password: nothing is consumed and the caller is asked to choose a password through the same
 *   link (set-password semantics), which makes the registrant's password stop working.
 */
export async function confirmEmailWithLink(
  ctx: ServiceContext,
  token: string,
  confirmer: { signedInUserId?: string } = {},
): Promise<ConfirmEmailResult> {
  if (!TOKEN_SHAPE.test(token)) throw invalidLink();
  const tokenHash = sha256Hex(token);
  const now = ctx.clock.now();
  const live = await findLiveEmailToken(ctx.db, tokenHash, now);
  if (!live || live.purpose !== 'verify_email') throw invalidLink();
  const result = await withTransaction(ctx.db, async (trx): Promise<ConfirmEmailResult> => {
    const user = await lockUser(trx, live.userId);
    if (!user) throw invalidLink();
    if (!user.emailVerified && confirmer.signedInUserId !== user.id) {
      return { confirmed: false, needsPassword: true, email: user.email };
    }
    const link = await consumeEmailToken(trx, tokenHash, ['verify_email'], now);
    if (!link) throw invalidLink();
    await updateUser(trx, link.userId, { emailVerified: true }, now);
    await burnEmailTokensOfUser(trx, link.userId, ['verify_email'], now);
    await revokeSessionsOfUser(trx, link.userId, now);
    await ctx.events.record(trx, { type: 'auth.email.verified', actorId: confirmer.signedInUserId ?? null, subjectId: live.userId });
    return { confirmed: true, email: link.email, userId: link.userId };
  });
  return result;
}

function queueVerificationMail(ctx: ServiceContext, user: LinkUser, token: string): void {
  const url = `${ctx.config.baseUrl}/verify-email?token=${encodeURIComponent(token)}`;
  const { t, brand } = mailEnv(ctx);
  // CONTRACT §8: say plainly whom the mail is for and what to do if the account was not theirs. The registrant's
  // name is not shown: whoever registered chose it.
  const paragraphs = [t.mail.verifyFor(user.email, ctx.config.baseUrl), t.mail.verifyAction];
  const warning = t.mail.verifyWarning;
  const footer = t.mail.footer(brand.name, ctx.config.baseUrl);
  ctx.mailer.send({
    to: user.email,
    subject: t.mail.verifySubject(brand.name),
    text: `${t.mail.hello}\n\n${paragraphs.join('\n\n')}\n\n${url}\n\n${warning}\n\n-- \n${footer}\n`,
    html: ctx.mailHtml([t.mail.hello, ...paragraphs, { href: url, text: t.mail.verifyButton }, warning], { brand, footer }),
  });
}

function queueSetPasswordMail(ctx: ServiceContext, user: LinkUser, token: string, reason: 'invite' | 'reset', validHours?: number): void {
  const url = `${ctx.config.baseUrl}/set-password?token=${encodeURIComponent(token)}`;
  const { t, brand } = mailEnv(ctx);
  const hello = user.firstName ? t.mail.helloName(user.firstName) : t.mail.hello;
  const intro = reason === 'invite' ? t.mail.inviteIntro : t.mail.resetIntro;
  const outro = reason === 'invite' ? (validHours !== undefined ? t.mail.inviteValidity(validHours) : undefined) : t.mail.resetOutro;
  const footer = t.mail.footer(brand.name, ctx.config.baseUrl);
  ctx.mailer.send({
    to: user.email,
    subject: reason === 'invite' ? t.mail.inviteSubject(brand.name) : t.mail.resetSubject(brand.name),
    text: `${hello}\n\n${intro} ${t.mail.choosePassword}\n\n${url}\n${outro ? `\n${outro}\n` : ''}\n-- \n${footer}\n`,
    html: ctx.mailHtml([hello, `${intro} ${t.mail.choosePassword}`, { href: url, text: t.mail.setButton }, ...(outro ? [outro] : [])], {
      brand,
      footer,
    }),
  });
}

/**
 * Tells the previous address that the account's email was changed by an administrator (CONTRACT §8), so that an
 * owner whose account was moved away from them learns it at once. No link: the old address has no power any more.
 */
export function sendEmailChangedNotice(ctx: ServiceContext, user: LinkUser, newEmail: string): void {
  const { t, brand } = mailEnv(ctx);
  const hello = user.firstName ? t.mail.helloName(user.firstName) : t.mail.hello;
  const paragraphs = [hello, t.mail.emailChanged(ctx.config.baseUrl, user.email, newEmail), t.mail.emailChangedOutro];
  const footer = t.mail.footer(brand.name, ctx.config.baseUrl);
  ctx.mailer.send({
    to: user.email,
    subject: t.mail.emailChangedSubject,
    text: `${paragraphs.join('\n\n')}\n\n-- \n${footer}\n`,
    html: ctx.mailHtml(paragraphs, { brand, footer }),
  });
}

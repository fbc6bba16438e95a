import type { DbOrTrx } from '../db';
import { addSeconds } from '../lib/clock';
import { randomToken, sha256Hex } from '../lib/crypto';
import type { ServiceContext } from './context';

export type EmailLinkPurpose = 'verify_email' | 'set_password';

interface LinkUser {
  id: string;
  email: string;
  firstName: string;
}

/**
 * Mints a 256-bit random link token for one user and one purpose; only its SHA-256 is stored (CONTRACT §4:
 * valid 24 h for verification, 1 h for set-password). Returns the raw token for the email.
 */
export async function createEmailLinkToken(
  ctx: ServiceContext,
  db: DbOrTrx,
  userId: string,
  purpose: EmailLinkPurpose,
): Promise<string> {
  const token = randomToken(32);
  const now = ctx.clock.now();
  const ttl = purpose === 'verify_email' ? ctx.config.verifyEmailTtlSeconds : ctx.config.setPasswordTtlSeconds;
  await db('email_tokens').insert({
    token_hash: sha256Hex(token),
    user_id: userId,
    purpose,
    created_at: now,
    expires_at: addSeconds(now, ttl),
  });
  return token;
}

/** Sends the address-verification link: {BASE_URL}/verify-email?token=… */
export async function sendVerificationEmail(ctx: ServiceContext, user: LinkUser): Promise<void> {
  const token = await createEmailLinkToken(ctx, ctx.db, user.id, 'verify_email');
  const url = `${ctx.config.baseUrl}/verify-email?token=${encodeURIComponent(token)}`;
  ctx.mailer.send({
    to: user.email,
    subject: 'Confirm your email address',
    text: `Hello ${user.firstName || 'there'},\n\nConfirm your email address by opening this link (valid 24 hours):\n\n${url}\n\nIf you did not create an account, ignore this message.\n`,
    html: `<p>Hello ${escapeHtml(user.firstName || 'there')},</p><p>Confirm your email address by opening this link (valid 24 hours):</p><p><a href="${escapeHtml(url)}">Confirm my email address</a></p><p>If you did not create an account, ignore this message.</p>`,
  });
}

/** Sends a set-password link (admin invite or forgot-password): {BASE_URL}/set-password?token=… */
export async function sendSetPasswordEmail(ctx: ServiceContext, user: LinkUser, reason: 'invite' | 'reset'): Promise<void> {
  const token = await createEmailLinkToken(ctx, ctx.db, user.id, 'set_password');
  const url = `${ctx.config.baseUrl}/set-password?token=${encodeURIComponent(token)}`;
  const intro = reason === 'invite' ? 'An account has been created for you.' : 'Someone asked to reset the password of your account.';
  const outro = reason === 'invite' ? '' : '\nIf it was not you, ignore this message: your password stays as it is.\n';
  ctx.mailer.send({
    to: user.email,
    subject: reason === 'invite' ? 'Set up your account' : 'Reset your password',
    text: `Hello ${user.firstName || 'there'},\n\n${intro} Choose a password by opening this link (valid 1 hour):\n\n${url}\n${outro}`,
    html: `<p>Hello ${escapeHtml(user.firstName || 'there')},</p><p>${intro} Choose a password by opening this link (valid 1 hour):</p><p><a href="${escapeHtml(url)}">Set my password</a></p>${outro ? `<p>${escapeHtml(outro.trim())}</p>` : ''}`,
  });
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

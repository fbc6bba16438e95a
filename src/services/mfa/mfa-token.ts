import { insertMfaToken } from '../../db/repositories/mfa-tokens.repo';
import { addSeconds } from '../../lib/clock';
import { randomToken, sha256Hex } from '../../lib/crypto';
import type { RequestMeta, ServiceContext } from '../context';
import type { SecurityEvent } from '../events';

/** CONTRACT §10: an mfa_token lives 5 minutes, is bound to one account and dies after 5 wrong codes. */
export const MFA_TOKEN_TTL_SECONDS = 300;
export const MFA_TOKEN_MAX_FAILURES = 5;

export function hashMfaToken(token: string): string {
  return sha256Hex(token);
}

/**
 * A correct first step (a password; an upstream sign-in: `firstFactor` 'fed'; an emailed code or link: 'otp') on an
 * account with a second factor (CONTRACT §10): issues the token that carries it to the second step (only its SHA-256
 * is stored) and records auth.login.mfa_required with `detail`.
 */
export async function startSecondStep(
  ctx: ServiceContext,
  userId: string,
  meta: RequestMeta,
  detail: SecurityEvent['detail'],
  firstFactor?: 'fed' | 'otp',
): Promise<string> {
  const token = randomToken(32);
  const now = ctx.clock.now();
  const expiresAt = addSeconds(now, MFA_TOKEN_TTL_SECONDS);
  await insertMfaToken(ctx.db, { tokenHash: hashMfaToken(token), userId, now, expiresAt, firstFactor });
  await ctx.events.record(ctx.db, { type: 'auth.login.mfa_required', subjectId: userId, ip: meta.ip, userAgent: meta.userAgent, detail });
  return token;
}

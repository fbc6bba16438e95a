import { insertMfaToken } from '../../db/repositories/mfa-tokens.repo';
import { addSeconds } from '../../lib/clock';
import { randomToken, sha256Hex } from '../../lib/crypto';
import type { ServiceContext } from '../context';

/** CONTRACT §10: an mfa_token lives 5 minutes, is bound to one account and dies after 5 wrong codes. */
export const MFA_TOKEN_TTL_SECONDS = 300;
export const MFA_TOKEN_MAX_FAILURES = 5;

export function hashMfaToken(token: string): string {
  return sha256Hex(token);
}

/**
 * Issues the token that carries a correct first step (a password; an upstream sign-in: `firstFactor` 'fed'; an
 * emailed code or link: 'otp') to the second step; only its SHA-256 is stored.
 */
export async function createMfaToken(ctx: ServiceContext, userId: string, firstFactor?: 'fed' | 'otp'): Promise<string> {
  const token = randomToken(32);
  const now = ctx.clock.now();
  const expiresAt = addSeconds(now, MFA_TOKEN_TTL_SECONDS);
  await insertMfaToken(ctx.db, { tokenHash: hashMfaToken(token), userId, now, expiresAt, firstFactor });
  return token;
}

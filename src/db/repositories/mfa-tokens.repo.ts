import type { DbOrTrx } from '..';
import { live, mappedTable } from '../table';

export interface MfaTokenRow {
  tokenHash: string;
  userId: string;
  failures: number;
  expiresAt: Date;
  /** The amr value of the first step: 'pwd' (password) or 'fed' (an upstream identity provider, CONTRACT §16). */
  firstFactor: string;
}

export interface MfaTokenRecord {
  token_hash: string;
  user_id: string;
  failures: number;
  first_factor: string | null;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

const mfaTokens = mappedTable('mfa_tokens', (r): MfaTokenRow => ({
  tokenHash: r.token_hash,
  userId: r.user_id,
  failures: r.failures,
  expiresAt: new Date(r.expires_at),
  firstFactor: r.first_factor ?? 'pwd',
}));

export async function insertMfaToken(
  db: DbOrTrx,
  t: { tokenHash: string; userId: string; now: Date; expiresAt: Date; firstFactor?: string },
): Promise<void> {
  await db('mfa_tokens').insert({
    token_hash: t.tokenHash,
    user_id: t.userId,
    created_at: t.now,
    expires_at: t.expiresAt,
    first_factor: t.firstFactor ?? null,
  });
}

/** The token while it is usable: unused, unexpired, fewer than `maxFailures` wrong codes. */
export const findLiveMfaToken = (db: DbOrTrx, tokenHash: string, now: Date, maxFailures: number) =>
  mfaTokens.findLive(db, { token_hash: tokenHash, used_at: null }, { now, failuresBelow: maxFailures });

/** Counts a wrong code atomically; returns the new failure count (0 when the token is no longer live). */
export async function countMfaTokenFailure(db: DbOrTrx, tokenHash: string, now: Date): Promise<number> {
  const rows = await db('mfa_tokens')
    .where({ token_hash: tokenHash, used_at: null })
    .modify(live({ now }))
    .increment('failures', 1)
    .returning('failures');
  return rows[0]?.failures ?? 0;
}

/** Ends every unused mfa_token of the user (its factors were reset: a second step begun before must not finish). */
export async function burnMfaTokensOfUser(db: DbOrTrx, userId: string, now: Date): Promise<void> {
  await db('mfa_tokens').where({ user_id: userId }).whereNull('used_at').update({ used_at: now });
}

/** Burns the token in ONE conditional UPDATE: of N concurrent completions exactly one gets a session. */
export async function consumeMfaToken(db: DbOrTrx, tokenHash: string, userId: string, now: Date, maxFailures: number): Promise<boolean> {
  const where = { token_hash: tokenHash, user_id: userId, used_at: null };
  return (await mfaTokens.spend(db, where, { used_at: now }, { now, failuresBelow: maxFailures })) !== undefined;
}

import type { DbOrTrx } from '..';

export interface LoginTokenRecord {
  token_hash: string;
  url: string;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

export async function insertLoginToken(db: DbOrTrx, t: { tokenHash: string; url: string; now: Date; expiresAt: Date }): Promise<void> {
  await db('login_tokens').insert({ token_hash: t.tokenHash, url: t.url, created_at: t.now, expires_at: t.expiresAt });
}

/**
 * Burns a login token in ONE conditional UPDATE (spec §3: login token -> burned): of N concurrent resolves
 * exactly one gets the destination back. Returns its URL, or undefined if unknown, used or expired.
 */
export async function consumeLoginToken(db: DbOrTrx, tokenHash: string, now: Date): Promise<string | undefined> {
  const rows = await db('login_tokens')
    .where({ token_hash: tokenHash })
    .whereNull('used_at')
    .where('expires_at', '>', now)
    .update({ used_at: now })
    .returning('url');
  return rows[0]?.url;
}

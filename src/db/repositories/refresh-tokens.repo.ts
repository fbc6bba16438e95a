import type { DbOrTrx } from '..';

export async function insertRefreshToken(
  db: DbOrTrx,
  t: { id: string; sessionId: string; now: Date; expiresAt: Date },
): Promise<void> {
  await db('refresh_tokens').insert({ id: t.id, session_id: t.sessionId, created_at: t.now, expires_at: t.expiresAt });
}

/**
 * Marks a live refresh token used, and names its successor, in one conditional statement: of N concurrent
 * presentations exactly one wins. Call it with the session row locked (lockLiveSession), the lock order of every
 * rotation (sessions, then refresh_tokens).
 */
export async function consumeRefreshToken(
  db: DbOrTrx,
  t: { id: string; sessionId: string; now: Date; successorId: string },
): Promise<boolean> {
  const n = await db('refresh_tokens')
    .where({ id: t.id, session_id: t.sessionId })
    .whereNull('used_at')
    .where('expires_at', '>', t.now)
    .update({ used_at: t.now, replaced_by: t.successorId });
  return n === 1;
}

export interface RotatedRefreshToken {
  id: string;
  sessionId: string;
  usedAt: Date | null;
  /** The token that replaced it, while that row still exists. */
  successor: { id: string; usedAt: Date | null; expiresAt: Date } | null;
}

/** A refresh token with the state of its successor: what reuse detection and the grace window decide on. */
export async function findRefreshTokenWithSuccessor(db: DbOrTrx, id: string): Promise<RotatedRefreshToken | undefined> {
  const row = await db('refresh_tokens as rt')
    .leftJoin('refresh_tokens as nx', 'nx.id', 'rt.replaced_by')
    .where('rt.id', id)
    .first('rt.id', 'rt.session_id', 'rt.used_at', 'nx.id as next_id', 'nx.used_at as next_used_at', 'nx.expires_at as next_expires_at');
  if (!row) return undefined;
  return {
    id: row.id,
    sessionId: row.session_id,
    usedAt: row.used_at ? new Date(row.used_at) : null,
    successor: row.next_id
      ? { id: row.next_id, usedAt: row.next_used_at ? new Date(row.next_used_at) : null, expiresAt: new Date(row.next_expires_at) }
      : null,
  };
}

import type { DbOrTrx } from '..';

export async function insertRefreshToken(
  db: DbOrTrx,
  t: { id: string; sessionId: string; now: Date; expiresAt: Date },
): Promise<void> {
  await db('refresh_tokens').insert({ id: t.id, session_id: t.sessionId, created_at: t.now, expires_at: t.expiresAt });
}

/**
 * Marks a refresh token used in one conditional statement, so that of N concurrent presentations exactly one
 * wins. The session must still be active. Returns the session id on success.
 */
export async function consumeRefreshToken(
  db: DbOrTrx,
  id: string,
  sessionId: string,
  now: Date,
): Promise<boolean> {
  const result = await db.raw(
    `update refresh_tokens rt set used_at = ?
       from sessions s
      where rt.id = ? and rt.session_id = ? and s.id = rt.session_id
        and rt.used_at is null and rt.expires_at > ?
        and s.revoked_at is null and s.expires_at > ?
      returning rt.id`,
    [now, id, sessionId, now, now],
  );
  return (result.rows ?? []).length === 1;
}

export async function findRefreshToken(
  db: DbOrTrx,
  id: string,
): Promise<{ id: string; sessionId: string; usedAt: Date | null } | undefined> {
  const row = await db('refresh_tokens').where({ id }).first();
  return row ? { id: row.id, sessionId: row.session_id, usedAt: row.used_at ? new Date(row.used_at) : null } : undefined;
}

import type { DbOrTrx } from '..';
import { date, dateOrNull, hidden, num, same, type RowOf } from '../rows';
import { table } from '../table';

/** An initial access token of CONTRACT §13 (CLIENT_REGISTRATION=token): only its SHA-256 is stored. */
export const registrationTokens = table('registration_tokens', {
  id: same<string>(),
  tokenHash: hidden<string>(),
  createdBy: same<string | null>(),
  maxUses: num,
  uses: num,
  createdAt: date,
  expiresAt: date,
  revokedAt: dateOrNull,
});
export type RegistrationTokenRow = RowOf<typeof registrationTokens.columns>;

export const insertRegistrationToken = (
  db: DbOrTrx,
  t: { id: string; tokenHash: string; createdBy: string | null; maxUses: number; now: Date; expiresAt: Date },
) =>
  registrationTokens.insert(db, {
    id: t.id,
    token_hash: t.tokenHash,
    created_by: t.createdBy,
    max_uses: t.maxUses,
    uses: 0,
    created_at: t.now,
    expires_at: t.expiresAt,
  });

export const listRegistrationTokens = (db: DbOrTrx) => registrationTokens.list(db, {}, [{ column: 'created_at', order: 'desc' }]);

/**
 * Spends one use of a live token: one conditional UPDATE, so N concurrent registrations with a token of M uses make at
 * most M clients (each UPDATE waits for the row lock and re-checks `uses < max_uses`). Undefined: unknown, expired,
 * revoked or used up.
 */
export async function consumeRegistrationToken(db: DbOrTrx, tokenHash: string, now: Date): Promise<RegistrationTokenRow | undefined> {
  const [row] = await db('registration_tokens')
    .where({ token_hash: tokenHash })
    .whereNull('revoked_at')
    .where('expires_at', '>', now)
    .whereRaw('uses < max_uses')
    .update({ uses: db.raw('uses + 1') })
    .returning('*');
  return row ? registrationTokens.toRow(row) : undefined;
}

/** Revokes a live token; undefined when there is no such token (a revoked one is returned as it is). */
export const revokeRegistrationToken = (db: DbOrTrx, id: string, now: Date) =>
  registrationTokens.update(db, { id }, { revoked_at: db.raw('coalesce(revoked_at, ?)', [now]) });

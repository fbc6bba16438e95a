import type { DbOrTrx } from '..';
import { date, dateOrNull, num, rowMapper, same, type RecordOf, type RowOf } from '../rows';

/** An initial access token of CONTRACT §13 (CLIENT_REGISTRATION=token): only its SHA-256 is stored. */
const registrationTokenColumns = {
  id: same<string>(),
  createdBy: same<string | null>(),
  maxUses: num,
  uses: num,
  createdAt: date,
  expiresAt: date,
  revokedAt: dateOrNull,
};

export type RegistrationTokenRow = RowOf<typeof registrationTokenColumns>;
export interface RegistrationTokenRecord extends RecordOf<typeof registrationTokenColumns> {
  token_hash: string;
}
const toRow = rowMapper(registrationTokenColumns);

export async function insertRegistrationToken(
  db: DbOrTrx,
  t: { id: string; tokenHash: string; createdBy: string | null; maxUses: number; now: Date; expiresAt: Date },
): Promise<RegistrationTokenRow> {
  const [row] = await db('registration_tokens')
    .insert({
      id: t.id,
      token_hash: t.tokenHash,
      created_by: t.createdBy,
      max_uses: t.maxUses,
      uses: 0,
      created_at: t.now,
      expires_at: t.expiresAt,
    })
    .returning('*');
  return toRow(row);
}

export async function listRegistrationTokens(db: DbOrTrx): Promise<RegistrationTokenRow[]> {
  const rows = await db('registration_tokens').orderBy('created_at', 'desc');
  return rows.map(toRow);
}

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
  return row ? toRow(row) : undefined;
}

/** Revokes a live token; undefined when there is no such token (a revoked one is returned as it is). */
export async function revokeRegistrationToken(db: DbOrTrx, id: string, now: Date): Promise<RegistrationTokenRow | undefined> {
  const [row] = await db('registration_tokens')
    .where({ id })
    .update({ revoked_at: db.raw('coalesce(revoked_at, ?)', [now]) })
    .returning('*');
  return row ? toRow(row) : undefined;
}

import type { DbOrTrx } from '..';

/** An initial access token of CONTRACT §13 (CLIENT_REGISTRATION=token): only its SHA-256 is stored. */
export interface RegistrationTokenRow {
  id: string;
  createdBy: string | null;
  maxUses: number;
  uses: number;
  createdAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
}

export interface RegistrationTokenRecord {
  id: string;
  token_hash: string;
  created_by: string | null;
  max_uses: number;
  uses: number;
  created_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
}

function toRow(r: RegistrationTokenRecord): RegistrationTokenRow {
  return {
    id: r.id,
    createdBy: r.created_by,
    maxUses: Number(r.max_uses),
    uses: Number(r.uses),
    createdAt: new Date(r.created_at),
    expiresAt: new Date(r.expires_at),
    revokedAt: r.revoked_at ? new Date(r.revoked_at) : null,
  };
}

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

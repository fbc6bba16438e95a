import type { JWK } from 'jose';
import type { DbOrTrx } from '..';
import { date, dateOrNull, rowMapper, same, type RecordOf, type RowOf } from '../rows';

/** An id_token signing key (CONTRACT §9). The private half is only ever held sealed here. */
const signingKeyColumns = {
  kid: same<string>(),
  alg: same<string>(),
  /** jsonb, parsed by pg. */
  publicJwk: same<JWK>(),
  privateJwkSealed: same<string>(),
  createdAt: date,
  retiredAt: dateOrNull,
};

export type SigningKeyRow = RowOf<typeof signingKeyColumns>;
export type SigningKeyRecord = RecordOf<typeof signingKeyColumns>;
const toRow = rowMapper(signingKeyColumns);

export async function findCurrentSigningKey(db: DbOrTrx, alg: string): Promise<SigningKeyRow | undefined> {
  const row = await db('oidc_signing_keys').where({ alg }).whereNull('retired_at').first();
  return row ? toRow(row) : undefined;
}

export async function findSigningKey(db: DbOrTrx, kid: string): Promise<SigningKeyRow | undefined> {
  const row = await db('oidc_signing_keys').where({ kid }).first();
  return row ? toRow(row) : undefined;
}

/** Current keys and keys retired after `retiredAfter` (their id_tokens may still be live), newest first. */
export async function listPublishedSigningKeys(db: DbOrTrx, retiredAfter: Date): Promise<SigningKeyRow[]> {
  const rows = await db('oidc_signing_keys')
    .where((q) => q.whereNull('retired_at').orWhere('retired_at', '>', retiredAfter))
    .orderBy('created_at', 'desc');
  return rows.map(toRow);
}

/**
 * Inserts a new current key unless one for this algorithm exists (the partial unique index decides, so of several
 * instances starting at once exactly one key wins). Returns whether this key was stored.
 */
export async function insertSigningKeyIfNoneCurrent(
  db: DbOrTrx,
  k: { kid: string; alg: string; publicJwk: JWK; privateJwkSealed: string; now: Date },
): Promise<boolean> {
  const result = await db.raw<{ rows: unknown[] }>(
    `insert into oidc_signing_keys (kid, alg, public_jwk, private_jwk_sealed, created_at)
     values (:kid, :alg, :publicJwk::jsonb, :sealed, :now)
     on conflict (alg) where retired_at is null do nothing
     returning kid`,
    { kid: k.kid, alg: k.alg, publicJwk: JSON.stringify(k.publicJwk), sealed: k.privateJwkSealed, now: k.now },
  );
  return result.rows.length > 0;
}

/** Retires every current key (all algorithms); returns their kids. */
export async function retireCurrentSigningKeys(db: DbOrTrx, now: Date): Promise<string[]> {
  const rows = await db('oidc_signing_keys').whereNull('retired_at').update({ retired_at: now }).returning('kid');
  return rows.map((r) => r.kid);
}

/** Keys retired before `before` verify nothing live any more. */
export async function deleteSigningKeysRetiredBefore(db: DbOrTrx, before: Date): Promise<number> {
  return db('oidc_signing_keys').whereNotNull('retired_at').where('retired_at', '<', before).delete();
}

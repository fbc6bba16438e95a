import type { JWK } from 'jose';
import type { DbOrTrx } from '..';

/** An id_token signing key (CONTRACT §9). The private half is only ever held sealed here. */
export interface SigningKeyRow {
  kid: string;
  alg: string;
  publicJwk: JWK;
  privateJwkSealed: string;
  createdAt: Date;
  retiredAt: Date | null;
}

export interface SigningKeyRecord {
  kid: string;
  alg: string;
  /** jsonb, parsed by pg. */
  public_jwk: JWK;
  private_jwk_sealed: string;
  created_at: Date;
  retired_at: Date | null;
}

function toRow(r: SigningKeyRecord): SigningKeyRow {
  return {
    kid: r.kid,
    alg: r.alg,
    publicJwk: r.public_jwk,
    privateJwkSealed: r.private_jwk_sealed,
    createdAt: new Date(r.created_at),
    retiredAt: r.retired_at ? new Date(r.retired_at) : null,
  };
}

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

import type { JWK } from 'jose';
import type { DbOrTrx } from '..';
import { date, dateOrNull, same, type RowOf } from '../rows';
import { keyRing } from './key-ring';

/** An id_token signing key (CONTRACT §9). The private half is only ever held sealed here. */
export const signingKeys = keyRing('oidc_signing_keys', 'kid', {
  kid: same<string>(),
  alg: same<string>(),
  /** jsonb, parsed by pg. */
  publicJwk: same<JWK>(),
  privateJwkSealed: same<string>(),
  createdAt: date,
  retiredAt: dateOrNull,
});
export type SigningKeyRow = RowOf<typeof signingKeys.columns>;

export const findCurrentSigningKey = (db: DbOrTrx, alg: string) => signingKeys.find(db, { alg, retired_at: null });
export const findSigningKey = (db: DbOrTrx, kid: string) => signingKeys.find(db, { kid });
/** Current keys and keys retired after `retiredAfter` (their id_tokens may still be live), newest first. */
export const listPublishedSigningKeys = signingKeys.listPublished;

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
export const retireCurrentSigningKeys = signingKeys.retireCurrent;
/** Keys retired before `before` verify nothing live any more. */
export const deleteSigningKeysRetiredBefore = signingKeys.deleteRetiredBefore;

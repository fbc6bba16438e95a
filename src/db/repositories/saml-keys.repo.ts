import type { DbOrTrx } from '..';
import { date, dateOrNull, same, type RowOf } from '../rows';
import { keyRing } from './key-ring';

/** The SAML IdP's signing key (CONTRACT §19): the private half only ever held sealed here. */
export const samlKeys = keyRing('saml_signing_keys', 'id', {
  id: same<string>(),
  privateKeySealed: same<string>(),
  certificatePem: same<string>(),
  createdAt: date,
  retiredAt: dateOrNull,
});
export type SamlKeyRow = RowOf<typeof samlKeys.columns>;

export const findCurrentSamlKey = (db: DbOrTrx) => samlKeys.find(db, { retired_at: null });
/** The current key and keys retired after `retiredAfter`, newest first (the metadata publishes them all). */
export const listPublishedSamlKeys = samlKeys.listPublished;

/** Inserts a current key unless there is one (the partial unique index decides among instances starting at once). */
export async function insertSamlKeyIfNoneCurrent(
  db: DbOrTrx,
  k: { id: string; privateKeySealed: string; certificatePem: string; now: Date },
): Promise<boolean> {
  const rows = await db('saml_signing_keys')
    .insert({ id: k.id, private_key_sealed: k.privateKeySealed, certificate_pem: k.certificatePem, created_at: k.now })
    .onConflict(db.raw('((true)) where retired_at is null'))
    .ignore()
    .returning('id');
  return rows.length > 0;
}

export const retireCurrentSamlKeys = samlKeys.retireCurrent;
export const deleteSamlKeysRetiredBefore = samlKeys.deleteRetiredBefore;

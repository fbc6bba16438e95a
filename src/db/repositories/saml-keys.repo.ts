import type { DbOrTrx } from '..';
import { date, dateOrNull, rowMapper, same, type RecordOf, type RowOf } from '../rows';

/** The SAML IdP's signing key (CONTRACT §19): the private half only ever held sealed here. */
const samlKeyColumns = {
  id: same<string>(),
  privateKeySealed: same<string>(),
  certificatePem: same<string>(),
  createdAt: date,
  retiredAt: dateOrNull,
};

export type SamlKeyRow = RowOf<typeof samlKeyColumns>;
export type SamlKeyRecord = RecordOf<typeof samlKeyColumns>;
const toRow = rowMapper(samlKeyColumns);

export async function findCurrentSamlKey(db: DbOrTrx): Promise<SamlKeyRow | undefined> {
  const row = await db('saml_signing_keys').whereNull('retired_at').first();
  return row ? toRow(row) : undefined;
}

/** The current key and keys retired after `retiredAfter`, newest first (the metadata publishes them all). */
export async function listPublishedSamlKeys(db: DbOrTrx, retiredAfter: Date): Promise<SamlKeyRow[]> {
  const rows = await db('saml_signing_keys')
    .where((q) => q.whereNull('retired_at').orWhere('retired_at', '>', retiredAfter))
    .orderBy('created_at', 'desc');
  return rows.map(toRow);
}

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

export async function retireCurrentSamlKeys(db: DbOrTrx, now: Date): Promise<string[]> {
  const rows = await db('saml_signing_keys').whereNull('retired_at').update({ retired_at: now }).returning('id');
  return rows.map((r: { id: string }) => r.id);
}

export async function deleteSamlKeysRetiredBefore(db: DbOrTrx, before: Date): Promise<number> {
  return db('saml_signing_keys').whereNotNull('retired_at').where('retired_at', '<', before).delete();
}

import type { DbOrTrx } from '..';
import type { Columns, RecordOf, RowOf } from '../rows';
import { table, type Table } from '../table';

/**
 * A table of rotating signing keys (id_tokens' and SAML's): current keys (`retired_at` null) sign; a rotation retires
 * them, and a retired key stays published for a while (its signatures may still be checked), then is deleted.
 */
export interface KeyRing<K extends 'oidc_signing_keys' | 'saml_signing_keys', Row, In> extends Table<K, Row, In> {
  /** The current keys and those retired after `retiredAfter`, newest first. */
  listPublished(db: DbOrTrx, retiredAfter: Date): Promise<Row[]>;
  /** Retires every current key; returns their ids. */
  retireCurrent(db: DbOrTrx, now: Date): Promise<string[]>;
  /** Deletes the keys retired before `before`; returns how many. */
  deleteRetiredBefore(db: DbOrTrx, before: Date): Promise<number>;
}

export function keyRing<K extends 'oidc_signing_keys' | 'saml_signing_keys', C extends Columns>(
  name: K,
  key: 'kid' | 'id',
  columns: C,
): KeyRing<K, RowOf<C>, RecordOf<C>> & { readonly columns: C } {
  const keys = table(name, columns);
  const from: string = name;
  return {
    ...keys,
    listPublished: async (db, retiredAfter) =>
      (
        await db(from)
          .where((q) => q.whereNull('retired_at').orWhere('retired_at', '>', retiredAfter))
          .orderBy('created_at', 'desc')
      ).map(keys.toRow),
    retireCurrent: async (db, now) =>
      (await db(from).whereNull('retired_at').update({ retired_at: now }).returning(key)).map((r) => r[key]),
    deleteRetiredBefore: async (db, before) => db(from).whereNotNull('retired_at').where('retired_at', '<', before).delete(),
  };
}

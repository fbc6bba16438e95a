import type { DbOrTrx } from '..';
import { convert, date, dateOrNull, num, rowMapper, same, type RecordOf, type RowOf } from '../rows';
import { parseTextArray } from './principal.repo';

const passkeyColumns = {
  id: same<string>(),
  userId: same<string>(),
  /** base64url credential ID. */
  credentialId: same<string>(),
  publicKey: convert((key: Buffer) => new Uint8Array(key)),
  counter: num,
  transports: convert((t: string[] | string) => parseTextArray(t)),
  name: same<string>(),
  backedUp: same<boolean>(),
  createdAt: date,
  lastUsedAt: dateOrNull,
};

export type PasskeyRow = RowOf<typeof passkeyColumns>;
export type PasskeyRecord = RecordOf<typeof passkeyColumns>;
const toRow = rowMapper(passkeyColumns);

export async function insertPasskey(
  db: DbOrTrx,
  p: {
    id: string;
    userId: string;
    credentialId: string;
    publicKey: Uint8Array;
    counter: number;
    transports: string[];
    name: string;
    backedUp: boolean;
    now: Date;
  },
): Promise<PasskeyRow> {
  const [row] = await db('webauthn_credentials')
    .insert({
      id: p.id,
      user_id: p.userId,
      credential_id: p.credentialId,
      public_key: Buffer.from(p.publicKey),
      counter: p.counter,
      transports: p.transports,
      name: p.name,
      backed_up: p.backedUp,
      created_at: p.now,
    })
    .returning('*');
  return toRow(row);
}

export async function listPasskeysOfUser(db: DbOrTrx, userId: string): Promise<PasskeyRow[]> {
  const rows = await db('webauthn_credentials').where({ user_id: userId }).orderBy('created_at', 'asc');
  return rows.map(toRow);
}

export async function findPasskeyByCredentialId(db: DbOrTrx, credentialId: string): Promise<PasskeyRow | undefined> {
  const row = await db('webauthn_credentials').where({ credential_id: credentialId }).first();
  return row ? toRow(row) : undefined;
}

/**
 * Records a verified assertion: the signature counter only moves forward, checked again in the UPDATE so that two
 * concurrent assertions with the same counter cannot both pass (a cloned authenticator, W3C WebAuthn §6.1.1).
 * Authenticators that do not count (counter 0) are always accepted. Returns whether the update applied.
 */
export async function recordPasskeyUse(db: DbOrTrx, id: string, newCounter: number, now: Date): Promise<boolean> {
  const n = await db('webauthn_credentials')
    .where({ id })
    .where((w) => w.where('counter', '<', newCounter).orWhere((z) => z.where('counter', 0).andWhere(db.raw('? = 0', [newCounter]))))
    .update({ counter: newCounter, last_used_at: now });
  return n > 0;
}

export async function renamePasskey(db: DbOrTrx, userId: string, id: string, name: string): Promise<PasskeyRow | undefined> {
  const [row] = await db('webauthn_credentials').where({ id, user_id: userId }).update({ name }).returning('*');
  return row ? toRow(row) : undefined;
}

/** Every passkey of the user, deleted in one statement; returns the deleted rows. */
export async function deletePasskeysOfUser(db: DbOrTrx, userId: string): Promise<PasskeyRow[]> {
  const rows = await db('webauthn_credentials').where({ user_id: userId }).delete().returning('*');
  return rows.map(toRow);
}

export async function deletePasskey(db: DbOrTrx, userId: string, id: string): Promise<PasskeyRow | undefined> {
  const [row] = await db('webauthn_credentials').where({ id, user_id: userId }).delete().returning('*');
  return row ? toRow(row) : undefined;
}

/** Removes every passkey of a user (an administrator's factor reset); returns how many went. */
export async function deleteAllPasskeysOfUser(db: DbOrTrx, userId: string): Promise<number> {
  return db('webauthn_credentials').where({ user_id: userId }).delete();
}

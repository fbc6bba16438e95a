import type { DbOrTrx } from '..';
import { convert, date, dateOrNull, num, same, type RowOf } from '../rows';
import { table } from '../table';
import { parseTextArray } from './principal.repo';

export const passkeys = table('webauthn_credentials', {
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
});
export type PasskeyRow = RowOf<typeof passkeys.columns>;

export const insertPasskey = (
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
) =>
  passkeys.insert(db, {
    id: p.id,
    user_id: p.userId,
    credential_id: p.credentialId,
    public_key: Buffer.from(p.publicKey),
    counter: p.counter,
    transports: p.transports,
    name: p.name,
    backed_up: p.backedUp,
    created_at: p.now,
  });

export const listPasskeysOfUser = (db: DbOrTrx, userId: string) => passkeys.list(db, { user_id: userId }, ['created_at']);

export const findPasskeyByCredentialId = (db: DbOrTrx, credentialId: string) => passkeys.find(db, { credential_id: credentialId });

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

export const renamePasskey = (db: DbOrTrx, userId: string, id: string, name: string) =>
  passkeys.update(db, { id, user_id: userId }, { name });

/** Every passkey of the user, deleted in one statement; returns the deleted rows. */
export async function deletePasskeysOfUser(db: DbOrTrx, userId: string): Promise<PasskeyRow[]> {
  const rows = await db('webauthn_credentials').where({ user_id: userId }).delete().returning('*');
  return rows.map(passkeys.toRow);
}

export async function deletePasskey(db: DbOrTrx, userId: string, id: string): Promise<PasskeyRow | undefined> {
  const [row] = await db('webauthn_credentials').where({ id, user_id: userId }).delete().returning('*');
  return row ? passkeys.toRow(row) : undefined;
}

/** Removes every passkey of a user (an administrator's factor reset); returns how many went. */
export async function deleteAllPasskeysOfUser(db: DbOrTrx, userId: string): Promise<number> {
  return db('webauthn_credentials').where({ user_id: userId }).delete();
}

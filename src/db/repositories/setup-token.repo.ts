import type { DbOrTrx } from '..';

export interface SetupTokenRecord {
  /** Always 1: the table holds at most one token. */
  id: number;
  token_sealed: string;
  created_at: Date;
}

/** Stores the sealed setup token unless one is already there; returns the stored one (this or an earlier). */
export async function ensureSetupToken(db: DbOrTrx, tokenSealed: string, now: Date): Promise<string> {
  await db('setup_token').insert({ id: 1, token_sealed: tokenSealed, created_at: now }).onConflict('id').ignore();
  const row = await db('setup_token').where({ id: 1 }).first('token_sealed');
  return row?.token_sealed ?? tokenSealed;
}

/** The sealed token, read with a row lock when `forUpdate` (the /setup transaction). */
export async function findSetupToken(db: DbOrTrx, options: { forUpdate?: boolean } = {}): Promise<string | undefined> {
  const q = db('setup_token').where({ id: 1 }).first('token_sealed');
  if (options.forUpdate) q.forUpdate();
  const row = await q;
  return row?.token_sealed;
}

export async function deleteSetupToken(db: DbOrTrx): Promise<void> {
  await db('setup_token').where({ id: 1 }).delete();
}

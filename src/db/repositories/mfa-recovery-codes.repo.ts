import { randomUUID } from 'node:crypto';
import type { DbOrTrx } from '..';

export interface RecoveryCodeRecord {
  id: string;
  user_id: string;
  code_hash: string;
  created_at: Date;
  used_at: Date | null;
}

/** Replaces every recovery code of the user with the given hashes. */
export async function replaceRecoveryCodes(db: DbOrTrx, userId: string, codeHashes: string[], now: Date): Promise<void> {
  await db('mfa_recovery_codes').where({ user_id: userId }).delete();
  await db('mfa_recovery_codes').insert(
    codeHashes.map((codeHash) => ({ id: randomUUID(), user_id: userId, code_hash: codeHash, created_at: now })),
  );
}

/** Burns one unused code in ONE conditional UPDATE: of N concurrent uses exactly one succeeds. */
export async function consumeRecoveryCode(db: DbOrTrx, userId: string, codeHash: string, now: Date): Promise<boolean> {
  const rows = await db('mfa_recovery_codes')
    .where({ user_id: userId, code_hash: codeHash })
    .whereNull('used_at')
    .update({ used_at: now })
    .returning('id');
  return rows.length === 1;
}

export async function countUnusedRecoveryCodes(db: DbOrTrx, userId: string): Promise<number> {
  const row = await db('mfa_recovery_codes').where({ user_id: userId }).whereNull('used_at').count<{ n: string }[]>({ n: '*' });
  return Number(row[0]?.n ?? 0);
}

/** Deletes every recovery code of the user; returns how many were unused. */
export async function deleteRecoveryCodes(db: DbOrTrx, userId: string): Promise<number> {
  const rows = await db('mfa_recovery_codes').where({ user_id: userId }).delete().returning('used_at');
  return rows.filter((r) => r.used_at === null).length;
}

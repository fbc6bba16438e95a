import type { DbOrTrx } from '..';

export interface TotpRow {
  userId: string;
  /** The base32 secret sealed with KEYS_SECRET (lib/sealed.ts); never returned to a client after setup. */
  secretSealed: string;
  createdAt: Date;
  confirmedAt: Date | null;
  lastUsedStep: number | null;
}

interface TotpRecord {
  user_id: string;
  secret_sealed: string;
  created_at: Date;
  confirmed_at: Date | null;
  last_used_step: string | number | null;
}

function toRow(r: TotpRecord): TotpRow {
  return {
    userId: r.user_id,
    secretSealed: r.secret_sealed,
    createdAt: new Date(r.created_at),
    confirmedAt: r.confirmed_at ? new Date(r.confirmed_at) : null,
    lastUsedStep: r.last_used_step === null ? null : Number(r.last_used_step),
  };
}

export async function findTotp(db: DbOrTrx, userId: string): Promise<TotpRow | undefined> {
  const row = await db<TotpRecord>('mfa_totp').where({ user_id: userId }).first();
  return row ? toRow(row) : undefined;
}

/**
 * Stores a pending (unconfirmed) secret, replacing an earlier pending one; a confirmed TOTP is left untouched.
 * Returns whether the pending secret was stored.
 */
export async function upsertPendingTotp(db: DbOrTrx, userId: string, secretSealed: string, now: Date): Promise<boolean> {
  const result = await db.raw(
    `insert into mfa_totp (user_id, secret_sealed, created_at) values (:userId, :secretSealed, :now)
     on conflict (user_id) do update set secret_sealed = excluded.secret_sealed, created_at = excluded.created_at,
       last_used_step = null
     where mfa_totp.confirmed_at is null
     returning user_id`,
    { userId, secretSealed, now },
  );
  return (result.rows ?? []).length === 1;
}

/**
 * Records `step` as used in ONE conditional UPDATE: it must be later than the last accepted step, so a code is
 * accepted once even when two instances check it at the same moment (RFC 6238 §5.2). `confirm` also turns a
 * pending secret into the confirmed one. Returns whether the step was accepted.
 */
export async function useTotpStep(db: DbOrTrx, userId: string, step: number, now: Date, options: { confirm: boolean }): Promise<boolean> {
  const q = db('mfa_totp')
    .where({ user_id: userId })
    .where((w) => w.whereNull('last_used_step').orWhere('last_used_step', '<', step));
  if (options.confirm) q.whereNull('confirmed_at');
  else q.whereNotNull('confirmed_at');
  const rows = await q
    .update(options.confirm ? { last_used_step: step, confirmed_at: now } : { last_used_step: step })
    .returning('user_id');
  return rows.length === 1;
}

export async function deleteTotp(db: DbOrTrx, userId: string): Promise<boolean> {
  return (await db('mfa_totp').where({ user_id: userId }).delete()) > 0;
}

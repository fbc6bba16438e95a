import type { DbOrTrx } from '..';
import { convert, date, dateOrNull, orNull, rowMapper, same, type RecordOf, type RowOf } from '../rows';

const totpColumns = {
  userId: same<string>(),
  /** The base32 secret sealed with KEYS_SECRET (lib/sealed.ts); never returned to a client after setup. */
  secretSealed: same<string>(),
  createdAt: date,
  confirmedAt: dateOrNull,
  lastUsedStep: convert((step: string | number | null) => (step === null ? null : Number(step))),
  /** The session that started a pending enrolment (CONTRACT §11); null once confirmed. */
  pendingSessionId: orNull<string>(),
};

export type TotpRow = RowOf<typeof totpColumns>;
export type TotpRecord = RecordOf<typeof totpColumns>;
const toRow = rowMapper(totpColumns);

export async function findTotp(db: DbOrTrx, userId: string): Promise<TotpRow | undefined> {
  const row = await db('mfa_totp').where({ user_id: userId }).first();
  return row ? toRow(row) : undefined;
}

/**
 * Stores a pending (unconfirmed) secret of the session `sessionId`, replacing an earlier pending one (of any
 * session); a confirmed TOTP is left untouched. Returns whether the pending secret was stored.
 */
export async function upsertPendingTotp(db: DbOrTrx, userId: string, secretSealed: string, now: Date, sessionId: string): Promise<boolean> {
  const result = await db.raw(
    `insert into mfa_totp (user_id, secret_sealed, created_at, pending_session_id) values (:userId, :secretSealed, :now, :sessionId)
     on conflict (user_id) do update set secret_sealed = excluded.secret_sealed, created_at = excluded.created_at,
       last_used_step = null, pending_session_id = excluded.pending_session_id
     where mfa_totp.confirmed_at is null
     returning user_id`,
    { userId, secretSealed, now, sessionId },
  );
  return (result.rows ?? []).length === 1;
}

/**
 * Records `step` as used in ONE conditional UPDATE: it must be later than the last accepted step, so a code is
 * accepted once even when two instances check it at the same moment (RFC 6238 §5.2). `confirm` also turns a
 * pending secret into the confirmed one, only for the session that started it and while the enrolment is younger
 * than `startedAfter` (CONTRACT §11). Returns whether the step was accepted.
 */
export async function useTotpStep(
  db: DbOrTrx,
  userId: string,
  step: number,
  now: Date,
  options: { confirm: false } | { confirm: true; sessionId: string; startedAfter: Date },
): Promise<boolean> {
  const q = db('mfa_totp')
    .where({ user_id: userId })
    .where((w) => w.whereNull('last_used_step').orWhere('last_used_step', '<', step));
  if (options.confirm) {
    q.whereNull('confirmed_at').where({ pending_session_id: options.sessionId }).where('created_at', '>', options.startedAfter);
  } else q.whereNotNull('confirmed_at');
  const rows = await q
    .update(options.confirm ? { last_used_step: step, confirmed_at: now, pending_session_id: null } : { last_used_step: step })
    .returning('user_id');
  return rows.length === 1;
}

export async function deleteTotp(db: DbOrTrx, userId: string): Promise<boolean> {
  return (await db('mfa_totp').where({ user_id: userId }).delete()) > 0;
}

import type { DbOrTrx } from '..';
import { deleteDeliveriesBefore, deliveryAttemptColumns, recordDeliveryOutcome, type DeliveryAttemptOutcome } from './deliveries';
import { convert, same, type RowOf } from '../rows';
import { table } from '../table';

/**
 * OpenID Connect Back-Channel Logout deliveries (issue 34): one row per (client, ended session), written by the
 * `session_ended` trigger of the backchannel_logout migration in the transaction that ended the session.
 */
export type BackchannelDeliveryStatus = 'pending' | 'delivered' | 'failed';

export const backchannelDeliveries = table('backchannel_logout_deliveries', {
  ...deliveryAttemptColumns,
  clientId: same<string>(),
  userId: same<string>(),
  /** The `sid` of the logout token: the browser session, as in the client's id_tokens. */
  sid: same<string>(),
  status: convert((value: string): BackchannelDeliveryStatus => (value === 'delivered' || value === 'failed' ? value : 'pending')),
});
export type BackchannelDeliveryRow = RowOf<typeof backchannelDeliveries.columns>;

/** One delivery with the client's current logout address and state (the attempt reads both). */
export async function findBackchannelDeliveryWork(
  db: DbOrTrx,
  id: string,
): Promise<{ delivery: BackchannelDeliveryRow; uri: string | null; clientActive: boolean } | undefined> {
  const row = await db('backchannel_logout_deliveries as d')
    .join('oauth_clients as c', 'c.client_id', 'd.client_id')
    .where('d.id', id)
    .first('d.*', 'c.backchannel_logout_uri as uri', 'c.is_active as client_active');
  if (!row) return undefined;
  return { delivery: backchannelDeliveries.toRow(row), uri: row.uri ?? null, clientActive: row.client_active === true };
}

export type BackchannelAttemptOutcome = DeliveryAttemptOutcome;

/** Records one attempt and, when another is due, enqueues it in the same transaction (backchannel_logout_enqueue). */
export const recordBackchannelAttempt = (db: DbOrTrx, id: string, outcome: BackchannelAttemptOutcome) =>
  recordDeliveryOutcome(db, 'backchannel_logout_deliveries', id, outcome, {
    excerpt: false,
    onlyPending: true,
    toRow: backchannelDeliveries.toRow,
    enqueue: (_row, delaySeconds) => db.raw('select backchannel_logout_enqueue(?::bigint, ?::double precision)', [id, delaySeconds]),
  });

/** A delivery that cannot be attempted (the client has no logout address any more, or was deactivated). */
export async function markBackchannelDeliveryFailed(db: DbOrTrx, id: string, error: string): Promise<boolean> {
  const n = await db('backchannel_logout_deliveries')
    .where({ id, status: 'pending' })
    .update({ status: 'failed', last_error: error, next_attempt_at: null });
  return n > 0;
}

/** The client's most recent deliveries, newest first (the console's application page, the admin API). */
export async function listBackchannelDeliveries(db: DbOrTrx, clientId: string, limit: number): Promise<BackchannelDeliveryRow[]> {
  const rows = await db('backchannel_logout_deliveries').where({ client_id: clientId }).orderBy('id', 'desc').limit(limit);
  return rows.map(backchannelDeliveries.toRow);
}

/** Deliveries of every client, newest first (tests and the prune job read them by session). */
export const listBackchannelDeliveriesOfSid = (db: DbOrTrx, sid: string) => backchannelDeliveries.list(db, { sid }, ['id']);

/**
 * Retention (AUDIT_RETENTION_DAYS, as webhook deliveries): deletes at most `limit` finished deliveries created before
 * `before` (served by backchannel_logout_deliveries_created_idx); a pending one is never deleted under its job.
 */
export async function deleteBackchannelDeliveriesBefore(db: DbOrTrx, before: Date, limit: number): Promise<number> {
  return deleteDeliveriesBefore(db, 'backchannel_logout_deliveries', before, limit, { order: 'created_at', keepPending: true });
}

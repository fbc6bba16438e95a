import type { DbOrTrx } from '..';
import { deleteDeliveriesBefore, deliveryAttemptColumns, recordDeliveryOutcome, type DeliveryAttemptOutcome } from './deliveries';
import { toAuditEventRow, type AuditEventRow } from './audit-events.repo';
import { date, dateOrNull, same, str, type RecordOf, type RowOf } from '../rows';
import { table } from '../table';

export const webhookSubscriptions = table('webhook_subscriptions', {
  id: same<string>(),
  url: same<string>(),
  events: same<string[]>(),
  enabled: same<boolean>(),
  description: same<string>(),
  secretSealed: same<string>(),
  previousSecretSealed: same<string | null>(),
  previousSecretExpiresAt: dateOrNull,
  createdAt: date,
  updatedAt: date,
});
export type WebhookSubscriptionRow = RowOf<typeof webhookSubscriptions.columns>;

export const insertWebhookSubscription = (
  db: DbOrTrx,
  s: { id: string; url: string; events: string[]; enabled: boolean; description: string; secretSealed: string; now: Date },
) =>
  webhookSubscriptions.insert(db, {
    id: s.id,
    url: s.url,
    events: s.events,
    enabled: s.enabled,
    description: s.description,
    secret_sealed: s.secretSealed,
    created_at: s.now,
    updated_at: s.now,
  });

export const listWebhookSubscriptions = (db: DbOrTrx) => webhookSubscriptions.list(db, {}, ['created_at', 'id']);

export const findWebhookSubscription = (db: DbOrTrx, id: string) => webhookSubscriptions.find(db, { id });

export const updateWebhookSubscription = (
  db: DbOrTrx,
  id: string,
  patch: Partial<{ url: string; events: string[]; enabled: boolean; description: string }>,
  now: Date,
) =>
  // Knex leaves out of the UPDATE the fields the patch leaves undefined.
  webhookSubscriptions.update(
    db,
    { id },
    { url: patch.url, events: patch.events, enabled: patch.enabled, description: patch.description, updated_at: now },
  );

/** The new secret signs from now on; the current one keeps signing beside it until `previousExpiresAt`. */
export async function rotateWebhookSecret(
  db: DbOrTrx,
  id: string,
  secretSealed: string,
  previousExpiresAt: Date,
  now: Date,
): Promise<WebhookSubscriptionRow | undefined> {
  const result = await db.raw<{ rows: RecordOf<typeof webhookSubscriptions.columns>[] }>(
    `update webhook_subscriptions
     set previous_secret_sealed = secret_sealed, previous_secret_expires_at = ?, secret_sealed = ?, updated_at = ?
     where id = ? returning *`,
    [previousExpiresAt, secretSealed, now, id],
  );
  const [row] = result.rows;
  return row ? webhookSubscriptions.toRow(row) : undefined;
}

/** Deletes the subscription and (cascade) its deliveries; their queued jobs find nothing and end. */
export const deleteWebhookSubscription = async (db: DbOrTrx, id: string) => (await webhookSubscriptions.delete(db, { id })) > 0;

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export const webhookDeliveries = table('webhook_deliveries', {
  ...deliveryAttemptColumns,
  subscriptionId: same<string>(),
  eventId: str,
  eventType: same<string>(),
  status: same<DeliveryStatus>(),
  lastResponseExcerpt: same<string | null>(),
});
export type WebhookDeliveryRow = RowOf<typeof webhookDeliveries.columns>;

/** Newest first; one more row than `limit` tells the caller whether another page exists. */
export async function listWebhookDeliveries(
  db: DbOrTrx,
  subscriptionId: string,
  filter: { status?: DeliveryStatus; beforeId?: string },
  limit: number,
): Promise<WebhookDeliveryRow[]> {
  const q = db('webhook_deliveries').where({ subscription_id: subscriptionId }).orderBy('id', 'desc').limit(limit);
  if (filter.status) q.where('status', filter.status);
  if (filter.beforeId !== undefined) q.where('id', '<', filter.beforeId);
  return (await q).map(webhookDeliveries.toRow);
}

/** What one attempt needs: the delivery, its subscription and its audit event (undefined parts were deleted). */
export interface DeliveryWork {
  delivery: WebhookDeliveryRow;
  subscription: WebhookSubscriptionRow;
  event: AuditEventRow | undefined;
}

export async function findDeliveryWork(db: DbOrTrx, deliveryId: string): Promise<DeliveryWork | undefined> {
  const delivery = await db('webhook_deliveries').where({ id: deliveryId }).first();
  if (!delivery) return undefined;
  const subscription = await findWebhookSubscription(db, delivery.subscription_id);
  if (!subscription) return undefined;
  const event = await db('audit_events').where({ id: delivery.event_id }).first();
  return { delivery: webhookDeliveries.toRow(delivery), subscription, event: event && toAuditEventRow(event) };
}

export interface AttemptOutcome extends DeliveryAttemptOutcome {
  responseExcerpt: string | null;
}

/**
 * Records one attempt and, when another is due, enqueues it in the same transaction (webhook_enqueue, the
 * migration's one caller of graphile-worker's SQL API).
 */
export const recordDeliveryAttempt = (db: DbOrTrx, deliveryId: string, outcome: AttemptOutcome) =>
  recordDeliveryOutcome(db, 'webhook_deliveries', deliveryId, outcome, {
    excerpt: true,
    onlyPending: false,
    toRow: webhookDeliveries.toRow,
    enqueue: (row, delaySeconds) => enqueueDelivery(db, String(row.id), row.subscription_id, delaySeconds),
  });

/** A delivery that cannot be attempted (subscription disabled, event pruned): failed without an attempt. */
export async function markDeliveryFailed(db: DbOrTrx, deliveryId: string, error: string): Promise<void> {
  await db('webhook_deliveries')
    .where({ id: deliveryId, status: 'pending' })
    .update({ status: 'failed', last_error: error, next_attempt_at: null });
}

export async function enqueueDelivery(db: DbOrTrx, deliveryId: string, subscriptionId: string, delaySeconds: number): Promise<void> {
  await db.raw('select webhook_enqueue(?::bigint, ?::uuid, ?::double precision)', [deliveryId, subscriptionId, delaySeconds]);
}

/** Operator's redelivery: pending again, one attempt now (the retry schedule continues from the attempts made). */
export async function resetDeliveryForRedelivery(
  db: DbOrTrx,
  subscriptionId: string,
  deliveryId: string,
): Promise<WebhookDeliveryRow | undefined> {
  const [row] = await db('webhook_deliveries')
    .where({ id: deliveryId, subscription_id: subscriptionId })
    .update({ status: 'pending', next_attempt_at: db.fn.now() })
    .returning('*');
  if (!row) return undefined;
  await enqueueDelivery(db, String(row.id), row.subscription_id, 0);
  return webhookDeliveries.toRow(row);
}

/** The backlog gauges: deliveries due now and the age of the oldest one (0 when none). */
export async function webhookBacklog(db: DbOrTrx): Promise<{ due: number; oldestSeconds: number }> {
  const result = await db.raw<{ rows: [{ due: number; oldest: number }] }>(
    `select count(*)::int as due, coalesce(extract(epoch from now() - min(next_attempt_at)), 0)::float8 as oldest
     from webhook_deliveries where status = 'pending' and next_attempt_at <= now()`,
  );
  const [row] = result.rows;
  return { due: Number(row.due), oldestSeconds: Math.max(0, Number(row.oldest)) };
}

/** Retention (AUDIT_RETENTION_DAYS): deletes at most `limit` deliveries created before `before`. */
export async function deleteWebhookDeliveriesBefore(db: DbOrTrx, before: Date, limit: number): Promise<number> {
  return deleteDeliveriesBefore(db, 'webhook_deliveries', before, limit, { order: 'id', keepPending: false });
}

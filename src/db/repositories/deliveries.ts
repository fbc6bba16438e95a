import type { DbOrTrx } from '..';
import { date, dateOrNull, same, str } from '../rows';

/**
 * What the two outbound delivery tables (webhook_deliveries, backchannel_logout_deliveries) share: recording one
 * attempt and the retention delete. Each is one statement; the table is one of a closed list, never input.
 */
type DeliveryTable = 'webhook_deliveries' | 'backchannel_logout_deliveries';

/** The columns both tables share: the delivery's id, its attempts and their outcome (the repositories add their own). */
export const deliveryAttemptColumns = {
  id: str,
  attempts: same<number>(),
  lastAttemptAt: dateOrNull,
  lastResponseStatus: same<number | null>(),
  lastError: same<string | null>(),
  nextAttemptAt: dateOrNull,
  deliveredAt: dateOrNull,
  createdAt: date,
};

export interface DeliveryAttemptOutcome {
  status: 'pending' | 'delivered' | 'failed';
  responseStatus: number | null;
  error: string | null;
  /** Seconds until the next attempt (status pending), else null. */
  retryInSeconds: number | null;
}

/**
 * Counts one attempt and writes its outcome (`attempts + 1` keeps the count right even if an operator's redelivery
 * raced the attempt); the next attempt is due `retryInSeconds` from now, and `delivered_at` is set on delivery. When
 * another attempt is due, `enqueue` queues its job in the same transaction.
 * `excerpt`: the table keeps the response's first bytes. `onlyPending`: a delivery no longer pending is left alone.
 * The updated row, or undefined when none was.
 */
export async function recordDeliveryOutcome<R, Row>(
  db: DbOrTrx,
  table: DeliveryTable,
  id: string,
  outcome: DeliveryAttemptOutcome & { responseExcerpt?: string | null },
  options: {
    excerpt: boolean;
    onlyPending: boolean;
    toRow: (record: R) => Row;
    enqueue: (record: R, delaySeconds: number) => PromiseLike<unknown>;
  },
): Promise<Row | undefined> {
  const result = await db.raw<{ rows: R[] }>(
    `update ${table} set
       attempts = attempts + 1,
       status = ?,
       last_attempt_at = now(),
       last_response_status = ?,${options.excerpt ? '\n       last_response_excerpt = ?,' : ''}
       last_error = ?,
       next_attempt_at = case when ?::double precision is null then null else now() + make_interval(secs => ?::double precision) end,
       delivered_at = case when ? = 'delivered' then now() else delivered_at end
     where id = ?${options.onlyPending ? " and status = 'pending'" : ''} returning *`,
    [
      outcome.status,
      outcome.responseStatus,
      ...(options.excerpt ? [outcome.responseExcerpt ?? null] : []),
      outcome.error,
      outcome.retryInSeconds,
      outcome.retryInSeconds,
      outcome.status,
      id,
    ],
  );
  const [row] = result.rows;
  if (!row) return undefined;
  if (outcome.retryInSeconds !== null) await options.enqueue(row, outcome.retryInSeconds);
  return options.toRow(row);
}

/**
 * Retention (AUDIT_RETENTION_DAYS): deletes at most `limit` deliveries created before `before`, oldest first by
 * `order` (the column its index serves); with `keepPending` a pending one is never deleted under its job.
 */
export async function deleteDeliveriesBefore(
  db: DbOrTrx,
  table: DeliveryTable,
  before: Date,
  limit: number,
  options: { order: 'id' | 'created_at'; keepPending: boolean },
): Promise<number> {
  const result = await db.raw<{ rows: unknown[] }>(
    `delete from ${table} where id in (select id from ${table}
      where created_at < ?${options.keepPending ? " and status <> 'pending'" : ''} order by ${options.order} limit ?) returning id`,
    [before, limit],
  );
  return result.rows.length;
}

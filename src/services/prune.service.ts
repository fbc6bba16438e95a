import { deleteBackchannelDeliveriesBefore } from '../db/repositories/backchannel-logout.repo';
import { deleteExpiredBatch, deleteInBatches, PRUNE_TABLES, type PruneTable } from '../db/repositories/prune.repo';
import { addSeconds } from '../lib/clock';
import { deleteWebhookDeliveriesBefore } from '../db/repositories/webhooks.repo';
import { auditRetentionCutoff, pruneAuditEvents } from './audit.service';
import { releaseStaleWorkerLocks } from './webhooks/queue';
import type { ServiceContext } from './context';
import { SAML_WINDOW_SECONDS } from './saml/saml-policy';

/** Rows per DELETE: small enough to hold locks only briefly. */
export const PRUNE_BATCH_SIZE = 500;
/** Revoked sessions stay this long before deletion. */
export const REVOKED_SESSION_RETENTION_SECONDS = 7 * 24 * 3600;
/** Login-failure counters idle this long (and not locked) are deleted. */
export const LOGIN_FAILURE_IDLE_SECONDS = 24 * 3600;
/** CONTRACT §13: a dynamically registered client without a token issued for this long is deleted. */
export const UNUSED_DYNAMIC_CLIENT_SECONDS = 30 * 24 * 3600;
export const PRUNE_INTERVAL_MS = 15 * 60 * 1000;
const FIRST_RUN_DELAY_MS = 60 * 1000;

/**
 * Deletes expired and long-revoked rows of every table with an expiry (CONTRACT §3), each in batches of
 * PRUNE_BATCH_SIZE until a batch comes back short, and audit events and webhook deliveries past AUDIT_RETENTION_DAYS. Returns the number
 * of rows deleted per table.
 */
export async function pruneExpired(
  ctx: ServiceContext,
  options: { batchSize?: number } = {},
): Promise<
  Record<PruneTable | 'audit_events' | 'webhook_deliveries' | 'backchannel_logout_deliveries' | 'webhook_workers_released', number>
> {
  const batchSize = options.batchSize ?? PRUNE_BATCH_SIZE;
  const now = ctx.clock.now();
  const cutoffs = {
    now,
    revokedBefore: addSeconds(now, -REVOKED_SESSION_RETENTION_SECONDS),
    idleBefore: addSeconds(now, -LOGIN_FAILURE_IDLE_SECONDS),
    unusedClientBefore: addSeconds(now, -UNUSED_DYNAMIC_CLIENT_SECONDS),
    samlRequestsBefore: addSeconds(now, -SAML_WINDOW_SECONDS),
  };
  const counts = {} as Record<
    PruneTable | 'audit_events' | 'webhook_deliveries' | 'backchannel_logout_deliveries' | 'webhook_workers_released',
    number
  >;
  for (const table of PRUNE_TABLES) {
    counts[table] = await deleteInBatches(() => deleteExpiredBatch(ctx.db, table, cutoffs, batchSize), batchSize);
  }
  counts.audit_events = await pruneAuditEvents(ctx, batchSize);
  // Webhook deliveries (issue 26) are kept as long as the audit events they carry.
  const deliveriesBefore = auditRetentionCutoff(ctx, now);
  counts.webhook_deliveries = await deleteInBatches(() => deleteWebhookDeliveriesBefore(ctx.db, deliveriesBefore, batchSize), batchSize);
  // Back-channel logout deliveries (issue 34) likewise: what the application's page lists, kept as long as the audit.
  counts.backchannel_logout_deliveries = await deleteInBatches(
    () => deleteBackchannelDeliveriesBefore(ctx.db, deliveriesBefore, batchSize),
    batchSize,
  );
  // A worker that died mid-attempt (kill -9) leaves its job locked; its attempt runs again after this sweep.
  counts.webhook_workers_released = await releaseStaleWorkerLocks(ctx.db);
  return counts;
}

/**
 * Prunes a minute after start and then every PRUNE_INTERVAL_MS. The timers are unref()'d so they never keep the
 * process alive; runs never overlap; a failure is logged and retried at the next tick. Returns the stop function.
 */
export function startPruneTimer(ctx: ServiceContext, intervalMs = PRUNE_INTERVAL_MS): () => void {
  let running = false;
  let stopped = false;
  const run = async () => {
    if (running || stopped) return;
    running = true;
    try {
      const counts = await pruneExpired(ctx);
      const total = Object.values(counts).reduce((a, b) => a + b, 0);
      if (total > 0) ctx.logger.info({ pruned: counts }, 'expired rows pruned');
    } catch (err) {
      ctx.logger.warn({ err: { message: (err as Error).message, code: (err as { code?: string }).code } }, 'pruning failed');
    } finally {
      running = false;
    }
  };
  const first = setTimeout(() => void run(), Math.min(FIRST_RUN_DELAY_MS, intervalMs));
  const timer = setInterval(() => void run(), intervalMs);
  first.unref();
  timer.unref();
  return () => {
    stopped = true;
    clearTimeout(first);
    clearInterval(timer);
  };
}

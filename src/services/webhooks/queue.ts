import type { Logger as WorkerLogger, Runner } from 'graphile-worker';
import type { ServiceContext } from '../context';
import { attemptDelivery, type DeliveryOptions } from './delivery.service';

/**
 * The delivery queue: graphile-worker (docs/webhooks.md "Why graphile-worker"), a job queue in PostgreSQL. Jobs
 * are enqueued by SQL in the transaction that writes the audit row (the fan-out trigger of the create_webhooks
 * migration calls `graphile_worker.add_job`), so a delivery exists exactly when its event committed, and survives
 * restarts and `kill -9`. graphile-worker hands each job to one worker of one instance (SKIP LOCKED), wakes workers
 * by LISTEN/NOTIFY, and runs named queues one job at a time (four lanes per subscription: a slow receiver holds at
 * most four workers). Each job is one attempt; the next attempt is a new job scheduled by the attempt itself.
 */
export const WEBHOOK_TASK = 'webhook_deliver';

/** Installs (or upgrades) graphile-worker's own schema; idempotent, safe from several instances at once. */
export async function installWebhookQueue(ctx: ServiceContext, connectionString: string): Promise<void> {
  const { runMigrations } = await loadGraphileWorker();
  await runMigrations({ connectionString, logger: await workerLogger(ctx) });
}

/** Loaded when first used: a server on the embedded database (no webhooks) never parses it. */
function loadGraphileWorker(): Promise<typeof import('graphile-worker')> {
  return import('graphile-worker');
}

async function workerLogger(ctx: ServiceContext): Promise<WorkerLogger> {
  const { Logger } = await loadGraphileWorker();
  const log = ctx.logger.child({ component: 'webhook-queue' });
  return new Logger(() => (level, message, meta) => {
    if (level === 'error') log.error({ meta }, message);
    else if (level === 'warning') log.warn({ meta }, message);
    else log.debug({ meta }, message);
  });
}

export interface WebhookWorker {
  stop(): Promise<void>;
}

export interface WebhookWorkerOptions extends DeliveryOptions {
  connectionString: string;
  /** Attempts in flight at once on this instance (WEBHOOK_CONCURRENCY). */
  concurrency?: number;
  /** How often jobs scheduled for later (retries) are looked for, in ms (graphile-worker's default 2000). */
  pollIntervalMs?: number;
}

/**
 * Starts this instance's workers beside the HTTP server: `concurrency` attempts at most, on a pool of their own
 * (graphile-worker's; attempts use the service pool only for their short reads and writes). `stop()` lets the
 * running attempts finish and releases their jobs.
 */
export async function startWebhookWorker(ctx: ServiceContext, options: WebhookWorkerOptions): Promise<WebhookWorker> {
  const concurrency = options.concurrency ?? ctx.config.webhookConcurrency;
  const { run } = await loadGraphileWorker();
  const runner: Runner = await run({
    connectionString: options.connectionString,
    concurrency,
    maxPoolSize: Math.min(concurrency + 2, 12),
    pollInterval: options.pollIntervalMs ?? 2000,
    noHandleSignals: true,
    logger: await workerLogger(ctx),
    taskList: {
      [WEBHOOK_TASK]: async (payload) => {
        const deliveryId = String((payload as { deliveryId?: unknown }).deliveryId ?? '');
        if (!/^[1-9][0-9]{0,18}$/.test(deliveryId)) return;
        await attemptDelivery(ctx, deliveryId, options);
      },
    },
  });
  return { stop: () => runner.stop() };
}

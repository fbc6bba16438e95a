import type { Logger as WorkerLogger, Runner } from 'graphile-worker';
import type { DbOrTrx } from '../../db';
import { createOutboundClient, type OutboundClient } from '../../lib/outbound-http';
import type { ServiceContext } from '../context';
import { attemptBackchannelLogout, BACKCHANNEL_LOGOUT_TASK } from '../oidc/backchannel-logout.service';
import { attemptDelivery, type DeliveryOptions } from './delivery.service';
import { webhookAddressRules, webhookOutboundPolicy } from './webhook-policy';

/**
 * The delivery queue: graphile-worker (docs/webhooks.md "Why graphile-worker"), a job queue in PostgreSQL. Jobs
 * are enqueued by SQL in the transaction that writes the audit row (the fan-out trigger of the create_webhooks
 * migration calls `graphile_worker.add_job`), so a delivery exists exactly when its event committed, and survives
 * restarts and `kill -9`. graphile-worker hands each job to one worker of one instance (SKIP LOCKED), wakes workers
 * by LISTEN/NOTIFY, and runs named queues one job at a time (four lanes per subscription: a slow receiver holds at
 * most four workers). Each job is one attempt; the next attempt is a new job scheduled by the attempt itself.
 */
export const WEBHOOK_TASK = 'webhook_deliver';

/**
 * How long an attempt waits for a core while password hashes take every one (PasswordHasher.unsaturated): a sign-in
 * during a burst of deliveries keeps its core (docs/webhooks.md "Deliveries and sign-ins"); during a login storm an
 * attempt goes after this long all the same.
 */
export const YIELD_TO_SIGN_INS_MS = 250;

/** Loaded when first used (the server's start): code that only imports the services never parses it. */
function loadGraphileWorker(): typeof import('graphile-worker') {
  return require('graphile-worker');
}

/** The delivery a job names (`{ deliveryId }`, written by the fan-out trigger), or undefined when it names none. */
function deliveryIdOf(payload: unknown): string | undefined {
  if (typeof payload !== 'object' || payload === null || !('deliveryId' in payload)) return undefined;
  const id = String(payload.deliveryId);
  return /^[1-9][0-9]{0,18}$/.test(id) ? id : undefined;
}

function workerLogger(ctx: ServiceContext): WorkerLogger {
  const { Logger } = loadGraphileWorker();
  const log = ctx.logger.child({ component: 'webhook-queue' });
  return new Logger(() => (level, message, meta) => {
    // Attempts use the service's pool, not graphile-worker's (which only fetches and completes jobs): a pool smaller
    // than the concurrency is intended here.
    if (message.startsWith('WARNING: having maxPoolSize')) return;
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
  /** How often the locks of dead workers are looked for, in ms (STALE_LOCK_SWEEP_MS; tests shorten it). */
  staleLockSweepMs?: number;
}

/**
 * Starts this instance's workers beside the HTTP server: `concurrency` attempts at most. graphile-worker fetches and
 * completes jobs on a pool of its own (at most 4 connections); attempts use the service pool for their short reads
 * and writes and hold no connection while waiting for a receiver. `stop()` lets running attempts finish.
 *
 * Restarts lose nothing (CONTRACT §23): the locks of workers that died (a `kill -9`, a power cut) are released as the
 * workers start (a locked job is not fetched before), and again every STALE_LOCK_SWEEP_MS, so that a dead worker's
 * attempt and the rest of its named queue run again within two minutes of any restart.
 */
export async function startWebhookWorker(ctx: ServiceContext, options: WebhookWorkerOptions): Promise<WebhookWorker> {
  const concurrency = options.concurrency ?? ctx.config.webhookConcurrency;
  const { run } = loadGraphileWorker();
  const log = ctx.logger.child({ component: 'webhook-queue' });
  let sweeping: Promise<void> | undefined;
  const sweep = () =>
    (sweeping ??= (async () => {
      try {
        const released = await releaseStaleWorkerLocks(ctx.db);
        if (released > 0) log.warn({ workers: released }, 'released the webhook attempts of workers that died; they run again');
      } catch (err) {
        log.warn(
          { err: { message: err instanceof Error ? err.message : String(err) } },
          'releasing the locks of dead webhook workers failed; retried',
        );
      } finally {
        sweeping = undefined;
      }
    })());
  // One keep-alive client for all attempts: a burst to one receiver reuses its connections (and TLS sessions). Its
  // address rules depend on webhook_allow_private, a runtime setting (CONTRACT §18): one client per value, the one
  // of the value in force chosen at each attempt.
  const byRule = new Map<boolean, OutboundClient>();
  const client: OutboundClient = {
    request: (url, request, policy) => {
      const rules = webhookAddressRules(ctx);
      let chosen = byRule.get(rules.webhookAllowPrivate);
      if (!chosen) {
        chosen = createOutboundClient(webhookOutboundPolicy(rules, '', options.outbound));
        byRule.set(rules.webhookAllowPrivate, chosen);
      }
      return chosen.request(url, request, policy);
    },
    close: async () => {
      await Promise.all([...byRule.values()].map((c) => c.close()));
    },
  };
  const deliveryOptions: DeliveryOptions = { ...options, client };
  // A job names its delivery; the attempt starts once password checks leave a core free (or after the bound).
  const attemptOf =
    (attempt: (service: ServiceContext, deliveryId: string, options: DeliveryOptions) => Promise<unknown>) => async (payload: unknown) => {
      const deliveryId = deliveryIdOf(payload);
      if (!deliveryId) return;
      await ctx.passwords.unsaturated(YIELD_TO_SIGN_INS_MS);
      await attempt(ctx, deliveryId, deliveryOptions);
    };
  const runner: Runner = await run({
    connectionString: options.connectionString,
    concurrency,
    maxPoolSize: Math.min(concurrency, 4),
    pollInterval: options.pollIntervalMs ?? 2000,
    noHandleSignals: true,
    logger: workerLogger(ctx),
    taskList: {
      [WEBHOOK_TASK]: attemptOf(attemptDelivery),
      // Issue 34: OpenID Connect back-channel logout tokens, on the same queue, schedule and outbound rules.
      [BACKCHANNEL_LOGOUT_TASK]: attemptOf(attemptBackchannelLogout),
    },
  });
  // The locks of dead workers, released once the queue's schema exists (run installs or upgrades it first, so a start
  // sets up graphile-worker once, issue 33): their jobs were not fetchable while locked, and run at the next poll.
  await sweep();
  const sweeper = setInterval(() => void sweep(), options.staleLockSweepMs ?? STALE_LOCK_SWEEP_MS);
  sweeper.unref();
  return {
    stop: async () => {
      clearInterval(sweeper);
      await sweeping;
      await runner.stop();
      await client.close();
    },
  };
}

/**
 * A job or queue lock older than this belongs to a worker that died (kill -9, power cut): an attempt ends within
 * DELIVERY_TIMEOUT_MS (10 s) plus a few statements, so no live worker holds a lock this long.
 */
export const STALE_WORKER_LOCK_SECONDS = 60;

/**
 * How often each instance looks for stale locks. A worker that died just before a restart holds its lock for at most
 * STALE_WORKER_LOCK_SECONDS, then waits at most one sweep and one poll: its queue runs again within 95 s.
 */
export const STALE_LOCK_SWEEP_MS = 30_000;

/**
 * Releases the locks of workers that died mid-attempt, so that their attempts run again within a minute and a half
 * instead of after graphile-worker's own 4 hours. Uses graphile-worker's `force_unlock_workers` (what
 * WorkerUtils.forceUnlockWorkers calls) on the worker ids whose locks are stale; the version is pinned (0.17.3), whose
 * `_private_jobs` / `_private_job_queues` tables hold the locks. Returns how many workers were released; 0 when the
 * queue is not installed (a database only the CLI has used).
 */
export async function releaseStaleWorkerLocks(db: DbOrTrx): Promise<number> {
  const installed = await db.raw(`select to_regclass('graphile_worker._private_jobs') is not null as ok`);
  if (!installed.rows[0]?.ok) return 0;
  const stale = await db.raw<{ rows: Array<{ ids: string[] | null }> }>(
    `select array(
       select locked_by from graphile_worker._private_jobs
        where locked_by is not null and locked_at < now() - make_interval(secs => ?)
       union
       select locked_by from graphile_worker._private_job_queues
        where locked_by is not null and locked_at < now() - make_interval(secs => ?)
     ) as ids`,
    [STALE_WORKER_LOCK_SECONDS, STALE_WORKER_LOCK_SECONDS],
  );
  const ids = stale.rows[0]?.ids ?? [];
  if (ids.length === 0) return 0;
  await db.raw('select graphile_worker.force_unlock_workers(?::text[])', [ids]);
  return ids.length;
}

import fs from 'node:fs';
import path from 'node:path';
import { collectDefaultMetrics, Counter, Gauge, Registry, type Histogram } from 'prom-client';
import { parseJsonText, PACKAGE_VERSION } from './json-text';

/**
 * The operator metrics (docs/operations.md "Metrics" lists every name), on the registry that GET /metrics serves.
 * Counters are fed by the metrics sink of the security events (services/event-sinks.ts); the pool gauges are read
 * at scrape time. Default process metrics include `nodejs_eventloop_lag_seconds`.
 */
export interface OperatorMetrics {
  registry: Registry;
  signIns: Counter<'outcome'>;
  lockouts: Counter;
  rateLimited: Counter;
  tokensIssued: Counter<'grant_type'>;
  refreshReuse: Counter;
  codeReplays: Counter;
  mailFailures: Counter;
  securityEvents: Counter<'type'>;
  /** Webhook attempts by outcome: delivered, retry (failed, another attempt scheduled), failed (no more attempts). */
  webhookDeliveries: Counter<'outcome'>;
}

export const WEBHOOK_OUTCOMES = ['delivered', 'retry', 'failed'] as const;

export interface WebhookBacklog {
  /** Deliveries whose next attempt is due now. */
  due: number;
  /** Seconds since the oldest due delivery became due (0 when none). */
  oldestSeconds: number;
}

export const SIGN_IN_OUTCOMES = ['success', 'bad_password', 'throttled', 'mfa_required'] as const;
export const GRANT_TYPES = ['password', 'registration', 'authorization_code', 'refresh_token'] as const;

export interface PoolStats {
  /** Connections at most (DATABASE_POOL_MAX and the statement pool's half of it). */
  max: number;
  inUse: number;
  idle: number;
  waiting: number;
}

export function createOperatorMetrics(
  options: { poolStats?: () => PoolStats | undefined; webhookBacklog?: () => Promise<WebhookBacklog> } = {},
): OperatorMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];

  /** A counter by one label, every value of which is exported from the start (at 0). */
  const countedBy = <L extends string>(name: string, help: string, label: L, values: readonly string[]): Counter<L> => {
    const counter = new Counter({ name, help, labelNames: [label], registers });
    for (const value of values) {
      const labels: Partial<Record<L, string>> = {};
      labels[label] = value;
      counter.inc(labels, 0);
    }
    return counter;
  };
  const signIns = countedBy(
    'sso_sign_ins_total',
    'Password sign-in attempts by outcome (success, bad_password, throttled, mfa_required)',
    'outcome',
    SIGN_IN_OUTCOMES,
  );
  const tokensIssued = countedBy(
    'sso_tokens_issued_total',
    'Token pairs issued, by grant type (password and registration are the first-party sign-ins)',
    'grant_type',
    GRANT_TYPES,
  );

  const pool = (pick: (s: PoolStats) => number) =>
    function collect(this: Gauge) {
      const stats = options.poolStats?.();
      if (stats) this.set(pick(stats));
    };
  new Gauge({ name: 'sso_db_pool_max', help: 'Database connections the pools may open at most', registers, collect: pool((s) => s.max) });
  new Gauge({ name: 'sso_db_pool_in_use', help: 'Database connections checked out of the pool', registers, collect: pool((s) => s.inUse) });
  new Gauge({ name: 'sso_db_pool_idle', help: 'Idle database connections in the pool', registers, collect: pool((s) => s.idle) });
  new Gauge({ name: 'sso_db_pool_waiting', help: 'Queries waiting for a database connection', registers, collect: pool((s) => s.waiting) });

  // The queue's age, read from the database at scrape time: the same figure on every instance (alert on the max).
  const backlog = (pick: (b: WebhookBacklog) => number) =>
    async function collect(this: Gauge) {
      const read = options.webhookBacklog;
      if (!read) return;
      try {
        this.set(pick(await read()));
      } catch {
        // database unavailable: sso_db_* and /health say so; the gauge keeps its last value
      }
    };
  new Gauge({
    name: 'sso_webhook_queue_oldest_seconds',
    help: 'Age in seconds of the oldest webhook delivery whose attempt is due (0 when none): the queue age',
    registers,
    collect: backlog((b) => b.oldestSeconds),
  });
  new Gauge({
    name: 'sso_webhook_queue_due',
    help: 'Webhook deliveries whose attempt is due now',
    registers,
    collect: backlog((b) => b.due),
  });
  const webhookDeliveries = countedBy(
    'sso_webhook_deliveries_total',
    'Webhook delivery attempts by outcome (delivered, retry, failed)',
    'outcome',
    WEBHOOK_OUTCOMES,
  );

  const build = new Gauge({
    name: 'sso_build_info',
    help: 'Always 1; the labels say which build runs',
    labelNames: ['version', 'node_version'] as const,
    registers,
  });
  build.set({ version: packageVersion(), node_version: process.version }, 1);

  return {
    registry,
    signIns,
    tokensIssued,
    lockouts: new Counter({ name: 'sso_login_lockouts_total', help: 'Addresses locked after repeated failed sign-ins', registers }),
    rateLimited: new Counter({ name: 'sso_rate_limited_total', help: 'Requests answered 429 (per-IP limit or locked address)', registers }),
    refreshReuse: new Counter({
      name: 'sso_refresh_token_reuse_total',
      help: 'Refresh tokens presented again after rotation (session revoked)',
      registers,
    }),
    codeReplays: new Counter({
      name: 'sso_authorization_code_replays_total',
      help: 'Authorization codes presented again (tokens revoked)',
      registers,
    }),
    mailFailures: new Counter({ name: 'sso_email_send_failures_total', help: 'Mails the SMTP server did not accept', registers }),
    securityEvents: new Counter({
      name: 'sso_security_events_total',
      help: 'Security events by type',
      labelNames: ['type'] as const,
      registers,
    }),
    webhookDeliveries,
  };
}

let version: string | undefined;
/** The version of package.json, found upward from this file (src/lib under tsx, dist/src/lib when compiled). */
function packageVersion(): string {
  if (version) return version;
  for (let dir = __dirname, i = 0; i < 5; i++, dir = path.dirname(dir)) {
    try {
      const pkg = parseJsonText(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'), PACKAGE_VERSION);
      if (pkg?.name === 'service-sso' && pkg.version) return (version = pkg.version);
    } catch {
      // not here: one level up
    }
  }
  return (version = 'unknown');
}

type Child = ReturnType<Histogram<'method' | 'route' | 'status'>['labels']>;

/**
 * The duration series of one route (issue 33): its label, the route's full declared pattern (`/api/auth/sessions/:sessionId`),
 * never the raw path, so the label set is bounded by the routes the app declares (CONTRACT §8), and its pre-bound
 * histogram children by method and status, made on first use. Made once per declared route by the app's router
 * (src/http/dispatch.ts), which sets it as `req.routeSeries` for the route it matched: an observation is two lookups
 * and an increment, with no key string or label object built per request.
 */
export class RouteSeries {
  private readonly byMethod = new Map<string, Map<number, Child>>();
  constructor(readonly label: string) {}

  child(histogram: Histogram<'method' | 'route' | 'status'>, method: string, status: number): Child {
    let byStatus = this.byMethod.get(method);
    if (byStatus === undefined) {
      byStatus = new Map();
      this.byMethod.set(method, byStatus);
    }
    let child = byStatus.get(status);
    if (child === undefined) {
      child = histogram.labels(method, this.label, String(status));
      byStatus.set(status, child);
    }
    return child;
  }
}

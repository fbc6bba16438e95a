import type { Config } from './config';
import { createDb, poolStats, type Db } from './db';
import { systemClock, type Clock } from './lib/clock';
import { JwtService } from './lib/jwt';
import { createLogger, type Logger } from './lib/logger';
import { createOperatorMetrics } from './lib/metrics';
import { createPasswordHasher, type PasswordHasher } from './lib/password';
import { createSealer } from './lib/sealed';
import { webhookBacklog } from './db/repositories/webhooks.repo';
import type { ServiceContext } from './services/context';
import { createMetricsEventSink, NOT_AUDITED } from './services/event-sinks';
import { createEventBus, createLogEventSink, type EventBus } from './services/events';
import { createMailer, type Mailer } from './services/mailer.service';
import { renderMailHtml } from './views/mail-html';
import { LiveSettings } from './services/settings/live-settings';
import { ClientCache } from './services/oauth/client-cache';
import { createClientKeysFetcher, JWKS_MAX_BYTES, JWKS_TIMEOUT_MS, type ClientKeysFetcher } from './services/oauth/client-keys';
import { webhookAddressRules, webhookOutboundPolicy } from './services/webhooks/webhook-policy';
import { createMetadataDocumentFetcher, type MetadataDocumentFetcher } from './services/oauth/registration/client-metadata.service';

/**
 * Builds the process-wide dependencies from config; tests override any of them. The one place that wires the layers
 * together below the app: the services get their ports' adapters here (the mail views).
 */
export function createServiceContext(
  config: Readonly<Config>,
  overrides: Partial<{
    db: Db;
    clock: Clock;
    logger: Logger;
    passwords: PasswordHasher;
    mailer: Mailer;
    events: EventBus;
    clientMetadata: MetadataDocumentFetcher;
    clientKeys: ClientKeysFetcher;
  }> = {},
): ServiceContext {
  const logger = overrides.logger ?? createLogger(config.logLevel, { pretty: !config.isProduction && config.nodeEnv !== 'test' });
  const db = overrides.db ?? createDb(config, { logger });
  const clock = overrides.clock ?? systemClock;
  const settings = new LiveSettings({ db, logger, pinned: config.pinnedSettings });
  const metrics = createOperatorMetrics({ poolStats: () => poolStats(db), webhookBacklog: () => webhookBacklog(db) });
  // Audit trail (in the change's transaction), log line and metrics: every security event goes to all three (services/events.ts).
  const events =
    overrides.events ??
    createEventBus({
      clock,
      sinks: [createLogEventSink(logger), createMetricsEventSink(metrics)],
      notAudited: NOT_AUDITED,
    });
  return {
    config,
    settings,
    logger,
    db,
    clock,
    metrics,
    jwt: new JwtService({
      accessSecret: config.jwtAccessSecret,
      refreshSecret: config.jwtRefreshSecret,
      issuer: config.issuer,
      audience: config.audience,
      accessTtlSeconds: config.accessTokenTtlSeconds,
      refreshTtlSeconds: config.refreshTokenTtlSeconds,
    }),
    passwords: overrides.passwords ?? createPasswordHasher(config.bcryptRounds),
    mailer:
      overrides.mailer ??
      createMailer({
        // CONTRACT §18: smtp_url and mail_from as they are when each mail goes out.
        transport: () => ({ smtpUrl: settings.current.values.smtp_url ?? undefined, from: settings.current.values.mail_from }),
        logger,
        recordFailure: (event) => events.record(db, event),
      }),
    mailHtml: renderMailHtml,
    events,
    sealer: createSealer(config.keysSecret),
    // Issue 33: kept only once startSync listens for changes (src/server.ts); until then every lookup reads the database.
    clients: new ClientCache({ db, logger }),
    clientMetadata: overrides.clientMetadata ?? createMetadataDocumentFetcher({ clock, allowedHosts: config.cimdAllowedHosts }),
    // Issue 34: a client's jwks_uri under the webhooks' address rules (read per fetch), or a host of CIMD_ALLOWED_HOSTS.
    clientKeys:
      overrides.clientKeys ??
      createClientKeysFetcher({
        clock,
        policyFor: (uri) =>
          webhookOutboundPolicy(webhookAddressRules({ config, settings }), uri, {
            allowedHosts: new Set(config.cimdAllowedHosts),
            timeoutMs: JWKS_TIMEOUT_MS,
            maxBytes: JWKS_MAX_BYTES,
          }),
      }),
    // No request: the process's own context (jobs, the CLI). Present, so that a request's context (services/context.ts
    // `forRequest`, which sets it) has the same keys in the same order: one shape for every context the services see.
    request: undefined,
  };
}

/** Releases what the context holds: mail queue, audit writes, worker threads, database pool. */
export async function closeServiceContext(ctx: ServiceContext): Promise<void> {
  await ctx.settings.stopSync();
  await ctx.clients.stopSync();
  await ctx.mailer.close();
  await ctx.events.idle?.();
  await ctx.passwords.close();
  await ctx.db.destroy();
}

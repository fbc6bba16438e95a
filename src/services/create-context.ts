import type { Config } from '../config';
import { createDb, poolStats, type Db } from '../db';
import { systemClock, type Clock } from '../lib/clock';
import { JwtService } from '../lib/jwt';
import { createLogger, type Logger } from '../lib/logger';
import { createOperatorMetrics } from '../lib/metrics';
import { createPasswordHasher, type PasswordHasher } from '../lib/password';
import { createSealer } from '../lib/sealed';
import type { ServiceContext } from './context';
import { createAuditEventSink, createMetricsEventSink } from './event-sinks';
import { createEventBus, createLogEventSink, type EventSink } from './events';
import { createMailer, type Mailer } from './mailer.service';

/** Builds the process-wide dependencies from config; tests override any of them. */
export function createServiceContext(
  config: Readonly<Config>,
  overrides: Partial<{ db: Db; clock: Clock; logger: Logger; passwords: PasswordHasher; mailer: Mailer; events: EventSink }> = {},
): ServiceContext {
  const logger = overrides.logger ?? createLogger(config.logLevel, { pretty: !config.isProduction && config.nodeEnv !== 'test' });
  const db = overrides.db ?? createDb(config, { logger });
  const clock = overrides.clock ?? systemClock;
  const metrics = createOperatorMetrics({ poolStats: () => poolStats(db) });
  // Log line, audit trail and metrics: every security event goes to all three (services/events.ts).
  const events =
    overrides.events ??
    createEventBus([createLogEventSink(logger), createAuditEventSink(db, clock, logger), createMetricsEventSink(metrics)]);
  return {
    config,
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
    mailer: overrides.mailer ?? createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, logger, events }),
    events,
    sealer: createSealer(config.keysSecret),
  };
}

/** Releases what the context holds: mail queue, audit writes, worker threads, database pool. */
export async function closeServiceContext(ctx: ServiceContext): Promise<void> {
  await ctx.mailer.close();
  await ctx.events.idle?.();
  await ctx.passwords.close();
  await ctx.db.destroy();
}

import type { Config } from '../config';
import { createDb, type Db } from '../db';
import { systemClock, type Clock } from '../lib/clock';
import { JwtService } from '../lib/jwt';
import { createLogger, type Logger } from '../lib/logger';
import { createPasswordHasher, type PasswordHasher } from '../lib/password';
import { createSealer } from '../lib/sealed';
import type { ServiceContext } from './context';
import { createLogEventSink, type EventSink } from './events';
import { createMailer, type Mailer } from './mailer.service';

/** Builds the process-wide dependencies from config; tests override any of them. */
export function createServiceContext(
  config: Readonly<Config>,
  overrides: Partial<{ db: Db; clock: Clock; logger: Logger; passwords: PasswordHasher; mailer: Mailer; events: EventSink }> = {},
): ServiceContext {
  const logger = overrides.logger ?? createLogger(config.logLevel);
  return {
    config,
    logger,
    db: overrides.db ?? createDb(config, { logger }),
    clock: overrides.clock ?? systemClock,
    jwt: new JwtService({
      accessSecret: config.jwtAccessSecret,
      refreshSecret: config.jwtRefreshSecret,
      issuer: config.issuer,
      audience: config.audience,
      accessTtlSeconds: config.accessTokenTtlSeconds,
      refreshTtlSeconds: config.refreshTokenTtlSeconds,
    }),
    passwords: overrides.passwords ?? createPasswordHasher(config.bcryptRounds),
    mailer: overrides.mailer ?? createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, logger }),
    events: overrides.events ?? createLogEventSink(logger),
    sealer: createSealer(config.keysSecret),
  };
}

/** Releases what the context holds: mail queue, worker threads, database pool. */
export async function closeServiceContext(ctx: ServiceContext): Promise<void> {
  await ctx.mailer.close();
  await ctx.passwords.close();
  await ctx.db.destroy();
}

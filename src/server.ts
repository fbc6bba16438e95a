import fs from 'node:fs';
import type { RequestHandler } from 'express';
import { createApp } from './app';
import { createHttpServer } from './lib/http-server';
import { ConfigError, loadConfig } from './config';
import { createDb, migrateLatest } from './db';
import { openEmbeddedForServer, type OpenedDatabase } from './db/embedded-database';
import { EMBEDDED_POOL_MAX, EmbeddedDatabaseError } from './db/embedded-postgres';
import { DataDirLockedError } from './lib/data-dir-lock';
import { createLogger } from './lib/logger';
import { tuneHeap } from './lib/heap-tuning';
import { createRateLimit, createRedisRateLimitStore, createRegistrationRateLimit } from './middleware/rate-limit';
import { ensureSuperAdmin } from './services/bootstrap.service';
import { currentSigningKey } from './services/oidc/signing-keys.service';
import { closeServiceContext, createServiceContext } from './services/create-context';
import { startPruneTimer } from './services/prune.service';
import { ensureSetupLink } from './services/setup.service';
import { installWebhookQueue, startWebhookWorker, type WebhookWorker } from './services/webhooks/queue';

/** The only file that listens or exits: loadConfig -> createDb -> migrate -> createApp -> listen. */
async function main(): Promise<void> {
  tuneHeap();
  let config;
  try {
    // A .env file in the working directory is read when present; real environment variables win.
    if (fs.existsSync('.env')) process.loadEnvFile('.env');
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`Configuration error: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel, { pretty: !config.isProduction && config.nodeEnv !== 'test' });
  // DATABASE_URL unset: the embedded PostgreSQL of DATA_DIR, owned by this server (db/embedded-database.ts).
  let embedded: OpenedDatabase | undefined;
  if (!config.databaseUrl) {
    try {
      embedded = await openEmbeddedForServer(config.dataDir, {
        logger,
        onUnexpectedExit: (code, signal) => {
          logger.fatal({ code, signal }, 'the embedded PostgreSQL stopped: stopping the server');
          process.exit(1);
        },
      });
    } catch (err) {
      if (!(err instanceof DataDirLockedError) && !(err instanceof EmbeddedDatabaseError)) throw err;
      const hint = err instanceof DataDirLockedError ? ' Stop it first, or set DATABASE_URL (PostgreSQL) to run several servers.' : '';
      process.stderr.write(`Failed to start: ${err.message}.${hint}\n`);
      process.exit(1);
    }
    config = { ...config, databaseUrl: embedded.url };
  }
  const db = createDb(config, { logger, poolMax: embedded ? EMBEDDED_POOL_MAX : undefined });
  const ctx = createServiceContext(config, { logger, db });
  const applied = await migrateLatest(ctx.db);
  if (applied.length) logger.info({ migrations: applied }, 'migrations applied');
  // CONTRACT §9: the id_token signing key exists from the first start (generated once, shared through the database).
  await currentSigningKey(ctx);

  if (config.bootstrapAdminEmail && config.bootstrapAdminPassword) {
    const result = await ensureSuperAdmin(ctx, { email: config.bootstrapAdminEmail, password: config.bootstrapAdminPassword });
    logger.info({ email: config.bootstrapAdminEmail, created: result.created, promoted: result.promoted }, 'bootstrap super_admin');
  }
  // First run: no super_admin yet. The one-time link is the way in (it dies once an admin exists).
  const setupLink = await ensureSetupLink(ctx);
  if (setupLink) {
    logger.warn(
      { setupUrl: setupLink },
      `No administrator yet: open ${setupLink} to create the first one (valid until an administrator exists)`,
    );
  }

  let rateLimit: RequestHandler | undefined;
  let registrationRateLimit: RequestHandler | undefined;
  let closeRedis = async () => {};
  if (config.redisUrl) {
    const redis = await createRedisRateLimitStore(config.redisUrl, logger);
    rateLimit = createRateLimit(config, redis.store);
    registrationRateLimit = createRegistrationRateLimit(config, redis.storeWithPrefix('sso:rl:register:'));
    closeRedis = redis.close;
  }

  // Issue 26: webhook deliveries run beside request handling (services/webhooks/queue.ts), on DATABASE_URL's PostgreSQL
  // or the embedded one alike. The queue's schema exists before the first request can write an event.
  await installWebhookQueue(ctx, config.databaseUrl!);
  const webhookWorker: WebhookWorker = await startWebhookWorker(ctx, { connectionString: config.databaseUrl! });

  const app = createApp({ ctx, rateLimit, registrationRateLimit });
  const server = createHttpServer(app);
  const stopPruning = startPruneTimer(ctx);
  if (config.allowHttpRedirectUris) {
    logger.warn('ALLOW_HTTP_REDIRECT_URIS=true: OAuth clients may register plain-http redirect URIs (internal networks only)');
  }
  if (config.clientIdMetadataDocuments) {
    // docs/mcp.md: the server now fetches URLs that anyone can put in an authorization request.
    logger.info(
      { allowed_hosts: config.cimdAllowedHosts },
      'CLIENT_ID_METADATA_DOCUMENTS=true: https client_ids are fetched as metadata documents',
    );
  }
  server.listen(config.port, () => {
    const database = embedded ? `embedded PostgreSQL (${config.dataDir})` : 'postgresql';
    logger.info({ url: config.baseUrl, database }, 'service-sso listening');
  });

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: draining in-flight requests');
    stopPruning();
    const force = setTimeout(() => {
      logger.warn('forced exit after 10 s');
      process.exit(1);
    }, 10_000);
    force.unref();
    server.close(async () => {
      await webhookWorker.stop().catch((err: Error) => logger.warn({ err: { message: err.message } }, 'webhook worker stop failed'));
      await closeRedis();
      await closeServiceContext(ctx);
      await embedded?.close();
      logger.info('stopped');
      process.exit(0);
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`Failed to start: ${(err as Error).message}\n`);
  process.exit(1);
});

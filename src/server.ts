import fs from 'node:fs';
import { createApp } from './app';
import { createAppServer } from './lib/http-server';
import { ConfigError, loadConfig } from './config';
import { createDb, migrateLatest } from './db';
import { openEmbeddedForServer, type OpenedDatabase } from './db/embedded-database';
import { EMBEDDED_POOL_MAX, EmbeddedDatabaseError, embeddedMaxConnections } from './db/embedded-postgres';
import { DataDirLockedError } from './lib/data-dir-lock';
import { createLogger } from './lib/logger';
import { thrownMessage } from './lib/thrown';
import { tuneHeap } from './lib/heap-tuning';
import { announceListening } from './lib/listening';
import { createRateLimit, createRedisRateLimitStore, createRegistrationRateLimit } from './middleware/rate-limit';
import { ensureSuperAdmin } from './services/bootstrap.service';
import { currentSigningKey } from './services/oidc/signing-keys.service';
import { currentSamlKey } from './services/saml/saml-keys.service';
import { closeServiceContext, createServiceContext } from './create-context';
import { startPruneTimer } from './services/prune.service';
import { ensureSetupLink } from './services/setup.service';
import { startWebhookWorker, type WebhookWorker } from './services/webhooks/queue';

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
  let databaseUrl = config.databaseUrl;
  // The embedded database's pool: DATABASE_POOL_MAX when set, else its own default; its connection limit follows.
  const embeddedPoolMax = config.databasePoolMax ?? EMBEDDED_POOL_MAX;
  if (!databaseUrl) {
    try {
      embedded = await openEmbeddedForServer(config.dataDir, {
        logger,
        maxConnections: embeddedMaxConnections(embeddedPoolMax),
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
    databaseUrl = embedded.url;
    config = { ...config, databaseUrl };
  }
  const connectionString: string = databaseUrl;
  const db = createDb(config, { logger, poolMax: embedded ? embeddedPoolMax : undefined });
  const ctx = createServiceContext(config, { logger, db });
  const applied = await migrateLatest(ctx.db);
  if (applied.length) logger.info({ migrations: applied }, 'migrations applied');
  // CONTRACT §18: the runtime settings (environment over stored over default), then followed live (LISTEN/NOTIFY on a
  // connection of its own, and a version check twice a second as the fallback).
  await ctx.settings.refresh();
  if (config.isProduction && !ctx.settings.current.values.smtp_url) {
    logger.fatal('SMTP_URL: is required in production (mails cannot go to the log): set it, or store smtp_url in the settings');
    await closeServiceContext(ctx);
    await embedded?.close();
    process.exit(1);
  }
  ctx.settings.startSync({ connectionString });
  // Issue 33: the client cache, emptied by every change to a client or an API resource on any instance (NOTIFY).
  ctx.clients.startSync({ connectionString });
  // The steps below are independent of each other (each its own round trips, or its own connections): they run at
  // once, so that a start waits for the slowest of them rather than their sum (issue 33, start within 1 s).
  const keys = (async () => {
    // CONTRACT §9: the id_token signing key exists from the first start (generated once, shared through the database).
    await currentSigningKey(ctx);
    await currentSamlKey(ctx);
  })();
  const limits = (async () => {
    if (!config.redisUrl) return { closeRedis: async () => {} };
    const redis = await createRedisRateLimitStore(config.redisUrl, logger);
    return {
      rateLimit: createRateLimit(config, redis.store),
      registrationRateLimit: createRegistrationRateLimit(config, redis.storeWithPrefix('sso:rl:register:')),
      closeRedis: redis.close,
    };
  })();
  const administrators = async () => {
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
  };
  // Issue 26: webhook deliveries run beside request handling (services/webhooks/queue.ts), on DATABASE_URL's PostgreSQL
  // or the embedded one alike. The queue's schema exists before the first request can write an event: starting the
  // workers installs or upgrades it (graphile-worker's run; issue 33: a start sets graphile-worker up once).
  // The bootstrap writes audit events, whose webhook fan-out needs the queue's schema: it comes after the workers' start.
  const queue = (async (): Promise<WebhookWorker> => {
    const worker = await startWebhookWorker(ctx, { connectionString });
    await administrators();
    return worker;
  })();
  const [, { rateLimit, registrationRateLimit, closeRedis }, webhookWorker] = await Promise.all([keys, limits, queue]);

  const app = createApp({ ctx, rateLimit, registrationRateLimit });
  const server = createAppServer(app);
  const stopPruning = startPruneTimer(ctx);
  if (config.allowHttpRedirectUris) {
    logger.warn('ALLOW_HTTP_REDIRECT_URIS=true: OAuth clients may register plain-http redirect URIs (internal networks only)');
  }
  if (ctx.settings.current.values.client_id_metadata_documents) {
    // docs/mcp.md: the server now fetches URLs that anyone can put in an authorization request.
    logger.info(
      { allowed_hosts: config.cimdAllowedHosts },
      'CLIENT_ID_METADATA_DOCUMENTS=true: https client_ids are fetched as metadata documents',
    );
  }
  server.listen(config.port, () => {
    const database = embedded ? `embedded PostgreSQL (${config.dataDir})` : 'postgresql';
    logger.info({ url: config.baseUrl, database, ...announceListening() }, 'service-sso listening');
  });

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: draining in-flight requests');
    stopPruning();
    // Requests get 10 s to finish; then the process ends with 1 (requests were cut short).
    const force = setTimeout(() => {
      logger.warn('forced exit after 10 s: requests still in flight');
      process.exit(1);
    }, 10_000);
    force.unref();
    // CONTRACT §23: every request that reaches the server while it drains is answered (with `Connection: close`);
    // a keep-alive connection is closed only while it carries no request (lib/http-server.ts).
    void server.drain().then(async () => {
      clearTimeout(force);
      // Drained. Each resource is closed in turn; one that fails is logged and the next is still closed, so that the
      // embedded PostgreSQL always stops. One that hangs (past 30 s, beyond PostgreSQL's own 15 s stop escalation) is
      // named in the log, and the exit code is 1.
      let step = 'webhook worker';
      const hung = setTimeout(() => {
        logger.error({ step }, 'forced exit: closing hung');
        process.exit(1);
      }, 30_000);
      hung.unref();
      // Only a database that may not have stopped cleanly makes the exit code 1; the rest is said in the log.
      let failed = false;
      const close = async (name: string, fn: () => Promise<unknown>) => {
        step = name;
        try {
          await fn();
        } catch (err) {
          if (name === 'embedded PostgreSQL') failed = true;
          logger.error({ step: name, err: { message: thrownMessage(err) } }, 'closing failed');
        }
      };
      await close('webhook worker', () => webhookWorker.stop());
      await close('redis', closeRedis);
      await close('service context', () => closeServiceContext(ctx));
      await close('embedded PostgreSQL', async () => embedded?.close());
      logger.info('stopped');
      process.exit(failed ? 1 : 0);
    });
  };
  // An exception or rejection nobody handles ends the process with 1, as Node does by default, but says so in the log
  // first. While stopping, the stop goes on: PostgreSQL ending its connections ("terminating connection due to
  // administrator command") can surface on a client still closing, and the resources are being closed anyway.
  const unhandled = (what: string) => (reason: unknown) => {
    const err = { message: thrownMessage(reason), stack: reason instanceof Error ? reason.stack : undefined };
    logger.error({ err, stopping }, what);
    if (!stopping) process.exit(1);
  };
  process.on('unhandledRejection', unhandled('unhandled rejection'));
  process.on('uncaughtException', unhandled('uncaught exception'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`Failed to start: ${thrownMessage(err)}\n`);
  process.exit(1);
});

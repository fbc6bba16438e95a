import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import type { Express, RequestHandler } from 'express';
import knexFactory, { type Knex } from 'knex';
import { createApp } from '../../src/app';
import { loadConfig, type Config } from '../../src/config';
import { createDb } from '../../src/db';
import type { ClientKeysFetcher } from '../../src/services/oauth/client-keys';
import { ManualClock } from '../../src/lib/clock';
import { createLogger, type Logger } from '../../src/lib/logger';
import type { ServiceContext } from '../../src/services/context';
import { closeServiceContext, createServiceContext } from '../../src/create-context';
import type { Mailer, MailMessage } from '../../src/services/mailer.service';
import type { MetadataDocumentFetcher } from '../../src/services/oauth/registration/client-metadata.service';

/**
 * The database as tests read it: any table, any row. src/db declares each table's row type (Knex's `Tables`); a test
 * reads and writes raw rows on purpose (state a user cannot see through the API), so its table calls stay untyped.
 */
export type LooseKnex = ((table: string) => ReturnType<typeof looseTable>) & Knex;
/** Any table as Knex reads one it has no row type for. */
export const looseTable = (db: Knex, table: string) => db(table);

export interface TestApp {
  app: Express;
  ctx: ServiceContext;
  config: Readonly<Config>;
  db: LooseKnex;
  clock: ManualClock;
  /** Mails sent through the default capturing mailer (unless `smtp` mode is used). */
  mails: MailMessage[];
  databaseUrl: string;
  close(): Promise<void>;
}

/** Environment every test app starts from; tests override single variables. */
export const TEST_ENV: Record<string, string> = {
  NODE_ENV: 'test',
  BCRYPT_ROUNDS: '4',
  RATE_LIMIT_MAX: '1000000',
  CLIENT_REGISTRATION_RATE_LIMIT_MAX: '1000000',
  LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
  JWT_ACCESS_SECRET: 'test-access-secret-0123456789abcdefghijklmnopqrstuvwxyz',
  JWT_REFRESH_SECRET: 'test-refresh-secret-0123456789abcdefghijklmnopqrstuvwxyz',
  BASE_URL: 'http://sso.test',
  LOGIN_APPS: JSON.stringify({ portal: 'https://portal.test', admin: 'https://admin.test' }),
  ALLOWED_ORIGINS: 'https://portal.test',
};

/** A fresh database cloned from the migrated template of this run. */
export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const base = process.env.DATABASE_URL;
  const template = process.env.SSO_TEST_TEMPLATE_DB;
  if (!base || !template) throw new Error('test database not prepared: run through jest (globalSetup)');
  const name = `sso_t_${randomBytes(6).toString('hex')}`;
  const admin = knexFactory({ client: 'pg', connection: base, pool: { min: 0, max: 1 } });
  try {
    await admin.raw(`create database ${name} template ${template}`);
  } finally {
    await admin.destroy();
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const a = knexFactory({ client: 'pg', connection: base, pool: { min: 0, max: 1 } });
      try {
        await a.raw(`drop database if exists ${name} with (force)`);
      } finally {
        await a.destroy();
      }
    },
  };
}

/** A capturing mailer: every message lands in `mails`. */
export function createCapturingMailer(mails: MailMessage[]): Mailer {
  return {
    send: (m) => {
      mails.push(m);
    },
    idle: async () => {},
    close: async () => {},
  };
}

/**
 * The app on its own fresh PostgreSQL database, with a movable clock and a capturing mailer.
 * `env` overrides TEST_ENV; `mailer: 'smtp'` keeps the real nodemailer mailer (set SMTP_URL in env).
 */
export async function createTestApp(
  options: {
    env?: Record<string, string>;
    mailer?: 'capture' | 'smtp';
    rateLimit?: RequestHandler;
    poolMax?: number;
    logger?: Logger;
    /** CONTRACT §13: the metadata-document fetcher to use (tests give it their CA and resolver). */
    clientMetadata?: (config: Readonly<Config>, clock: ManualClock) => MetadataDocumentFetcher;
    /** Issue 34: the jwks_uri fetcher to use (tests give it their CA or stricter address rules). */
    clientKeys?: (config: Readonly<Config>, clock: ManualClock) => ClientKeysFetcher;
  } = {},
): Promise<TestApp> {
  const database = await createTestDatabase();
  const config = loadConfig({
    ...TEST_ENV,
    DATA_DIR: path.join(os.tmpdir(), 'sso-test-data'),
    ...options.env,
    DATABASE_URL: database.url,
  });
  const clock = new ManualClock();
  const mails: MailMessage[] = [];
  const logger = options.logger ?? createLogger(config.logLevel);
  const db = createDb(config, { poolMax: options.poolMax ?? 20, logger });
  const ctx = createServiceContext(config, {
    db,
    clock,
    logger,
    ...(options.mailer === 'smtp' ? {} : { mailer: createCapturingMailer(mails) }),
    ...(options.clientMetadata ? { clientMetadata: options.clientMetadata(config, clock) } : {}),
    ...(options.clientKeys ? { clientKeys: options.clientKeys(config, clock) } : {}),
  });
  const app = createApp({ ctx, rateLimit: options.rateLimit });
  return {
    app,
    ctx,
    config,
    db,
    clock,
    mails,
    databaseUrl: database.url,
    close: async () => {
      await closeServiceContext(ctx);
      await database.drop();
    },
  };
}

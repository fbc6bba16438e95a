/**
 * `npm run bench`: throughput and memory of the hot paths, each printed as a ratio against a baseline measured in
 * the same run on the same machine (absolute numbers vary between machines; ratios much less so).
 *
 * - baseline: a bare Express app answering a small JSON body (the framework's own ceiling here).
 * - /health: one `select 1`.
 * - GET /api/auth/me: JWT verify + the single-round-trip live session/permission lookup.
 * - POST /api/auth/login: bcrypt in the worker pool (compared with the same number of raw bcrypt hashes).
 * - memory: RSS growth over the whole run.
 *
 * Uses DATABASE_URL when set (recommended), else an embedded PGlite database in a temporary directory.
 */
import autocannon from 'autocannon';
import bcrypt from 'bcryptjs';
import express from 'express';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { migrateLatest } from '../src/db';
import { createLogger } from '../src/lib/logger';
import { closeServiceContext, createServiceContext } from '../src/services/create-context';
import { createCapturingMailer } from '../test/helpers/test-app';

const DURATION_SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);

async function listen(handler: http.RequestListener): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function run(
  title: string,
  options: { url: string; method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string; connections?: number },
) {
  const result = await autocannon({
    url: options.url,
    method: options.method ?? 'GET',
    headers: options.headers,
    body: options.body,
    connections: options.connections ?? CONNECTIONS,
    duration: DURATION_SECONDS,
  });
  const bad = result.non2xx + result.errors + result.timeouts;
  return { title, rps: result.requests.average, p99: result.latency.p99, bad };
}

async function createDatabaseUrl(): Promise<{ env: Record<string, string>; cleanup: () => Promise<void> }> {
  if (!process.env.DATABASE_URL) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sso-bench-'));
    return { env: { DATA_DIR: dir }, cleanup: async () => fs.rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `sso_bench_${process.pid}`;
  const admin = knexFactory({ client: 'pg', connection: process.env.DATABASE_URL, pool: { min: 0, max: 1 } });
  await admin.raw(`drop database if exists ${name}`);
  await admin.raw(`create database ${name}`);
  const url = new URL(process.env.DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    env: { DATABASE_URL: url.toString(), DATA_DIR: os.tmpdir() },
    cleanup: async () => {
      await admin.raw(`drop database if exists ${name} with (force)`);
      await admin.destroy();
    },
  };
}

async function main(): Promise<void> {
  const rssStart = process.memoryUsage().rss;
  const database = await createDatabaseUrl();
  const env: NodeJS.ProcessEnv = { ...process.env, ...database.env, LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '10000000', NODE_ENV: 'test' };
  if (!process.env.DATABASE_URL) delete env.DATABASE_URL;
  const config = loadConfig(env);
  const ctx = createServiceContext(config, { logger: createLogger('silent'), mailer: createCapturingMailer([]) });
  await migrateLatest(ctx.db);
  const app = createApp({ ctx });
  const sso = await listen(app);

  const bare = express();
  bare.get('/', (_req, res) => {
    res.json({ status: 'OK' });
  });
  const baseline = await listen(bare);

  const email = 'bench@example.test';
  const password = 'bench-password';
  const reg = await fetch(`${sso.url}/api/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ first_name: 'Bench', last_name: 'User', email, password }),
  });
  const { accessToken } = (await reg.json()) as { accessToken: string };

  const results = [];
  results.push(await run('baseline: bare Express JSON', { url: baseline.url }));
  results.push(await run('GET /health', { url: `${sso.url}/health` }));
  results.push(await run('GET /api/auth/me (Bearer)', { url: `${sso.url}/api/auth/me`, headers: { authorization: `Bearer ${accessToken}` } }));
  await baseline.close();

  // Login is bcrypt-bound: compare with raw bcrypt throughput at the same cost on all cores.
  const hash = bcrypt.hashSync(password, config.bcryptRounds);
  const started = Date.now();
  let compares = 0;
  while (Date.now() - started < 2000) {
    bcrypt.compareSync(password, hash);
    compares++;
  }
  const bcryptPerSecondAllCores = (compares / ((Date.now() - started) / 1000)) * Math.max(1, os.availableParallelism());
  const login = await run('POST /api/auth/login', {
    url: `${sso.url}/api/auth/login`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
    connections: 8,
  });

  const rssEnd = process.memoryUsage().rss;
  await sso.close();
  await closeServiceContext(ctx);
  await database.cleanup();

  const base = results[0]!.rps;
  const rows = results.map((r) => ({
    scenario: r.title,
    'req/s': Math.round(r.rps),
    'p99 ms': r.p99,
    'ratio vs baseline': (r.rps / base).toFixed(3),
    'non-2xx/errors': r.bad,
  }));
  rows.push({
    scenario: login.title,
    'req/s': Math.round(login.rps),
    'p99 ms': login.p99,
    'ratio vs baseline': `${(login.rps / bcryptPerSecondAllCores).toFixed(3)} of raw bcrypt (${Math.round(bcryptPerSecondAllCores)}/s)`,
    'non-2xx/errors': login.bad,
  });
  console.table(rows);
  console.log(`memory: RSS ${Math.round(rssStart / 2 ** 20)} MiB -> ${Math.round(rssEnd / 2 ** 20)} MiB (ratio ${(rssEnd / rssStart).toFixed(2)})`);
  console.log(`database: ${process.env.DATABASE_URL ? 'PostgreSQL (DATABASE_URL)' : 'embedded PGlite'}; ${CONNECTIONS} connections, ${DURATION_SECONDS} s per scenario`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

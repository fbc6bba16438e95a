/**
 * `npm run soak`: the 5xx soak (issue 33). Starts the production build on a fresh database, optionally loads the
 * machine with busy loops, and for a given time repeats bursts of concurrent requests on one single-use thing:
 *
 * - N concurrent exchanges of one authorization code (exactly one may win; the others are invalid_grant),
 * - N concurrent OAuth refreshes of one refresh token (rotation, grace window, reuse detection),
 * - N concurrent first-party refreshes (`POST /api/auth/refresh-token`) of one refresh token,
 * - N concurrent sign-ins with wrong passwords for one address (the per-address throttle: 401s, then 429s).
 *
 * Every 5xx is printed with the error class the server logged for its request (matched by `X-Request-Id`: the error's
 * name, code and message from the server's log, never anything from the response body, which names no class). The
 * exit status is 1 when any 5xx was seen, so the soak is a check, not only a report.
 *
 * Options: `--seconds N` (default 60), `--ways N` (concurrency of a burst, default 30), `--hogs N` (busy-loop
 * processes loading the machine meanwhile, default 2), `--fresh-pool` (restart the server before every round, so
 * each burst opens its database connections afresh, as a just-started instance or a test app does).
 * Needs `DATABASE_URL` (a PostgreSQL server where it may create and drop a database).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import knexFactory from 'knex';

const ROOT = path.resolve(__dirname, '..');
const { values: opts } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    ways: { type: 'string', default: '30' },
    hogs: { type: 'string', default: '2' },
    'fresh-pool': { type: 'boolean', default: false },
  },
});
const SECONDS = Number(opts.seconds);
const WAYS = Number(opts.ways);
const HOGS = Number(opts.hogs);
const REDIRECT_URI = 'http://127.0.0.1:9/callback';

const children = new Set<ChildProcess>();
function killAll(): void {
  for (const child of children) {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}
process.on('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130));

function launch(command: string, args: string[], env: NodeJS.ProcessEnv, out: number | 'ignore'): ChildProcess {
  const child = spawn(command, args, { cwd: ROOT, env, detached: true, stdio: ['ignore', out, out] });
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

async function call(url: string, init: RequestInit & { json?: unknown; form?: Record<string, string> } = {}): Promise<Answer> {
  const headers = new Headers(init.headers);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set('content-type', 'application/json');
    body = JSON.stringify(init.json);
  }
  if (init.form) {
    headers.set('content-type', 'application/x-www-form-urlencoded');
    body = new URLSearchParams(init.form).toString();
  }
  const res = await fetch(url, { ...init, headers, body, redirect: 'manual' });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

function expectStatus(what: string, res: Answer, ...ok: number[]): void {
  if (!ok.includes(res.status)) throw new Error(`${what}: HTTP ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
}

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

async function startServer(env: NodeJS.ProcessEnv, logFile: string): Promise<ChildProcess> {
  const out = fs.openSync(logFile, 'a');
  const child = launch(process.execPath, [path.join(ROOT, 'dist/src/server.js')], env, out);
  fs.closeSync(out);
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}; see ${logFile}`);
    try {
      const res = await fetch(`${env.BASE_URL}/health`);
      await res.arrayBuffer();
      if (res.status === 200) return child;
    } catch {
      // not listening yet
    }
    if (Date.now() - started > 60_000) throw new Error('the server did not become healthy within 60 s');
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((resolve) => child.once('exit', resolve));
  process.kill(-child.pid!, 'SIGTERM');
  await gone;
}

interface Fixtures {
  bearer: string;
  client: { id: string; secret: string };
  email: string;
}

async function fixtures(sso: string, admin: { email: string; password: string }): Promise<Fixtures> {
  const adminLogin = await call(`${sso}/api/auth/login`, { method: 'POST', json: admin });
  expectStatus('admin login', adminLogin, 200);
  const created = await call(`${sso}/api/admin/oauth-clients`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminLogin.body.accessToken}` },
    json: { name: 'Soak client', redirect_uris: [REDIRECT_URI], scopes: ['openid', 'profile', 'email'] },
  });
  expectStatus('create OAuth client', created, 201);
  const email = 'soak-user@example.test';
  const reg = await call(`${sso}/api/auth/register`, {
    method: 'POST',
    json: { first_name: 'Soak', last_name: 'User', email, password: 'soak-password-1' },
  });
  expectStatus('register', reg, 201);
  return { bearer: reg.body.accessToken, client: { id: created.body.client.client_id, secret: created.body.client_secret }, email };
}

async function authorizationCode(sso: string, fx: Fixtures): Promise<{ code: string; verifier: string }> {
  const verifier = randomBytes(32).toString('base64url');
  const params = new URLSearchParams({
    response_type: 'code',
    client_id: fx.client.id,
    redirect_uri: REDIRECT_URI,
    scope: 'openid profile email',
    state: randomBytes(8).toString('hex'),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  });
  const headers = { authorization: `Bearer ${fx.bearer}` };
  const auth = await call(`${sso}/api/oauth/authorize?${params}`, { headers });
  expectStatus('authorize', auth, 302, 303);
  let location = new URL(auth.headers.get('location')!, sso);
  if (location.pathname === '/consent') {
    const approve = await call(`${sso}/api/oauth/authorize/approve`, {
      method: 'POST',
      headers,
      json: { request_id: location.searchParams.get('request_id') },
    });
    expectStatus('approve', approve, 200);
    location = new URL(approve.body.redirect_url);
  }
  const code = location.searchParams.get('code');
  if (!code) throw new Error(`authorize: no code in ${location}`);
  return { code, verifier };
}

const tokenRequest = (sso: string, fx: Fixtures, form: Record<string, string>) =>
  call(`${sso}/api/oauth/token`, { method: 'POST', headers: { authorization: basic(fx.client.id, fx.client.secret) }, form });

const exchange = (sso: string, fx: Fixtures, c: { code: string; verifier: string }) =>
  tokenRequest(sso, fx, { grant_type: 'authorization_code', code: c.code, code_verifier: c.verifier, redirect_uri: REDIRECT_URI });

interface Failure {
  burst: string;
  status: number;
  requestId: string;
  body: unknown;
}

const tally = new Map<string, Map<number, number>>();
const failures: Failure[] = [];

function count(burst: string, answers: Answer[]): void {
  const byStatus = tally.get(burst) ?? new Map<number, number>();
  tally.set(burst, byStatus);
  for (const a of answers) {
    byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1);
    if (a.status >= 500) failures.push({ burst, status: a.status, requestId: a.headers.get('x-request-id') ?? '?', body: a.body });
  }
}

const burst = (n: number, fn: () => Promise<Answer>) => Promise.all(Array.from({ length: n }, fn));

async function round(sso: string, fx: Fixtures, i: number): Promise<void> {
  // One code, N exchanges at once.
  const code = await authorizationCode(sso, fx);
  count('code exchange', await burst(WAYS, () => exchange(sso, fx, code)));
  // One OAuth refresh token (from a fresh code), N refreshes at once.
  const issued = await exchange(sso, fx, await authorizationCode(sso, fx));
  expectStatus('code exchange for a refresh token', issued, 200);
  count(
    'OAuth refresh',
    await burst(WAYS, () => tokenRequest(sso, fx, { grant_type: 'refresh_token', refresh_token: issued.body.refresh_token })),
  );
  // One first-party refresh token, N refreshes at once.
  const login = await call(`${sso}/api/auth/login`, { method: 'POST', json: { email: fx.email, password: 'soak-password-1' } });
  expectStatus('login', login, 200);
  count(
    'first-party refresh',
    await burst(WAYS, () => call(`${sso}/api/auth/refresh-token`, { method: 'POST', json: { refreshToken: login.body.refreshToken } })),
  );
  // N wrong passwords for one address at once (a fresh address per round: the throttle's lock would carry over).
  const guessed = `soak-guess-${i}@example.test`;
  count(
    'parallel guesses',
    await burst(WAYS, () => call(`${sso}/api/auth/login`, { method: 'POST', json: { email: guessed, password: 'wrong' } })),
  );
}

/** Every log line of the server with level warn or above that names one of the failed requests' ids. */
function errorClasses(logFile: string, ids: Set<string>): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const line of fs.readFileSync(logFile, 'utf8').split('\n')) {
    if (!line.startsWith('{')) continue;
    let entry: { level?: number; reqId?: string; msg?: string; err?: { name?: string; code?: string; message?: string } };
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    if (!entry.reqId || !ids.has(entry.reqId) || (entry.level ?? 0) < 40) continue;
    const err = entry.err ?? {};
    const text = `${entry.msg}: ${err.name ?? '?'}${err.code ? ` ${err.code}` : ''} "${err.message ?? ''}"`;
    found.set(entry.reqId, [...(found.get(entry.reqId) ?? []), text]);
  }
  return found;
}

async function main(): Promise<void> {
  const base = process.env.DATABASE_URL;
  if (!base) throw new Error('DATABASE_URL: a PostgreSQL server where the soak may create and drop a database');
  const build = spawnSync(process.execPath, [path.join(ROOT, 'scripts/start.js'), '--build-only'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('the build failed');

  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sso-soak-'));
  const logFile = path.join(workDir, 'server.log');
  const name = `sso_soak_${process.pid}`;
  const admin = knexFactory({ client: 'pg', connection: base, pool: { min: 0, max: 1 } });
  await admin.raw(`create database ${name}`);
  const dbUrl = new URL(base);
  dbUrl.pathname = `/${name}`;
  const port = await freePort();
  const sso = `http://127.0.0.1:${port}`;
  const bootstrap = { email: 'soak-admin@example.test', password: randomBytes(12).toString('base64url') };
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'production',
    PORT: String(port),
    BASE_URL: sso,
    DATABASE_URL: dbUrl.toString(),
    JWT_ACCESS_SECRET: randomBytes(48).toString('base64url'),
    JWT_REFRESH_SECRET: randomBytes(48).toString('base64url'),
    SMTP_URL: 'smtp://127.0.0.1:9',
    MAIL_FROM: 'soak@example.test',
    BOOTSTRAP_ADMIN_EMAIL: bootstrap.email,
    BOOTSTRAP_ADMIN_PASSWORD: bootstrap.password,
    // Every request comes from 127.0.0.1; the limiter still runs on every /api request.
    RATE_LIMIT_MAX: '10000000',
  };
  let server: ChildProcess | undefined;
  let rounds = 0;
  try {
    server = await startServer(env, logFile);
    const fx = await fixtures(sso, bootstrap);
    for (let i = 0; i < HOGS; i++) launch(process.execPath, ['-e', 'for(;;){}'], { PATH: process.env.PATH }, 'ignore');
    process.stdout.write(
      `soak: ${SECONDS} s of ${WAYS}-way bursts, ${HOGS} busy loops beside, ${opts['fresh-pool'] ? 'a fresh pool every round' : 'one server'}\n`,
    );
    const until = Date.now() + SECONDS * 1000;
    while (Date.now() < until) {
      if (opts['fresh-pool'] && rounds > 0) {
        await stopServer(server);
        server = await startServer(env, logFile);
      }
      await round(sso, fx, rounds++);
    }
  } finally {
    killAll();
    if (server) await stopServer(server).catch(() => undefined);
    await admin.raw(`drop database if exists ${name} with (force)`).catch(() => undefined);
    await admin.destroy();
  }

  process.stdout.write(`\n${rounds} rounds, load average ${os.loadavg()[0]!.toFixed(1)} at the end\n`);
  for (const [name, byStatus] of tally) {
    const parts = [...byStatus].sort(([a], [b]) => a - b).map(([s, n]) => `${s} × ${n}`);
    process.stdout.write(`  ${name.padEnd(20)} ${parts.join(', ')}\n`);
  }
  const classes = errorClasses(logFile, new Set(failures.map((f) => f.requestId)));
  process.stdout.write(`\n5xx answers: ${failures.length}\n`);
  for (const f of failures) {
    const logged = classes.get(f.requestId) ?? ['(nothing logged for this request)'];
    process.stdout.write(`  ${f.status} ${f.burst} ${f.requestId}: ${logged.join(' | ')}\n`);
  }
  process.stdout.write(`server log: ${logFile}\n`);
  process.exitCode = failures.length > 0 ? 1 : 0;
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  killAll();
  process.exit(2);
});

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../helpers/oauth';
import { buildOnce, postgresOf, ROOT, startServerProcess, type RunningServer } from '../helpers/processes';

/**
 * `npm start` on the embedded database (real PostgreSQL under DATA_DIR, a child of the server), as a newcomer runs it:
 * the real server process of the bundled build (what `npm start` runs), real HTTP. Start, register, login, me,
 * graceful SIGTERM (PostgreSQL stops with the server), restart on the same data; two servers started at the same
 * instant on one DATA_DIR (one runs, the other is refused in one line); a DATA_DIR written by PGlite (earlier versions).
 */
async function startServer(dataDir: string, port: number, extraEnv: Record<string, string> = {}): Promise<RunningServer> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'info', ...extraEnv };
  delete env.DATABASE_URL;
  delete env.NODE_ENV;
  return startServerProcess(env, port, undefined, { build: true });
}

beforeAll(() => buildOnce(), 300_000);

const stop = (running: RunningServer) => running.stop();


const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

test('npm start on the embedded database: register, login, me, graceful stop, data kept across restarts', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sso-smoke-'));
  const port = await freePort();
  const first = await startServer(dataDir, port, {
    BOOTSTRAP_ADMIN_EMAIL: 'boss@example.test',
    BOOTSTRAP_ADMIN_PASSWORD: 'boss-password',
    // A slow hash keeps a login in flight long enough to send SIGTERM in the middle of it.
    BCRYPT_ROUNDS: '12',
  });
  let firstExit: Promise<number | null> | undefined;
  try {
    const health = await fetch(`${first.base}/health`);
    expect(await health.json()).toEqual({ status: 'OK' });

    const reg = await fetch(`${first.base}/api/auth/register`, json({ first_name: 'Smoke', last_name: 'Test', email: 'smoke@example.test', password: 'smoke-pass' }));
    expect(reg.status).toBe(201);
    const login = await fetch(`${first.base}/api/auth/login`, json({ email: 'smoke@example.test', password: 'smoke-pass' }));
    expect(login.status).toBe(200);
    const { accessToken } = (await login.json()) as { accessToken: string };
    const me = await fetch(`${first.base}/api/auth/me`, { headers: { authorization: `Bearer ${accessToken}` } });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { user: { email: string } }).user.email).toBe('smoke@example.test');

    const boss = await fetch(`${first.base}/api/auth/login`, json({ email: 'boss@example.test', password: 'boss-password' }));
    expect(boss.status).toBe(200);
    const bossBody = (await boss.json()) as { accessToken: string; user: { adminRole: string; email_verified: boolean } };
    expect(bossBody.user).toMatchObject({ adminRole: 'super_admin', email_verified: true });

    // SIGTERM drains: a request in flight when the signal arrives still gets its answer.
    const inFlight = fetch(`${first.base}/api/auth/login`, json({ email: 'smoke@example.test', password: 'smoke-pass' }));
    await new Promise((r) => setTimeout(r, 100));
    firstExit = stop(first);
    expect((await inFlight).status).toBe(200);
  } finally {
    expect(await (firstExit ?? stop(first))).toBe(0);
  }
  expect(first.output()).not.toContain('smoke-pass');
  expect(first.output()).not.toContain('boss-password');
  expect(first.output()).toMatch(/draining in-flight requests/);
  // PostgreSQL stopped with the server, and DATA_DIR is free.
  expect(postgresOf(dataDir)).toEqual([]);
  expect(fs.existsSync(path.join(dataDir, 'sso.lock'))).toBe(false);

  const second = await startServer(dataDir, port);
  try {
    const login = await fetch(`${second.base}/api/auth/login`, json({ email: 'smoke@example.test', password: 'smoke-pass' }));
    expect(login.status).toBe(200);
    expect(second.output()).not.toMatch(/migrations applied/);
  } finally {
    expect(await stop(second)).toBe(0);
  }
  expect(postgresOf(dataDir)).toEqual([]);
  fs.rmSync(dataDir, { recursive: true, force: true });
}, 330_000);

test('two servers started at the same instant on one fresh DATA_DIR: one serves, the other is refused in one line', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sso-twins-'));
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
  delete env.DATABASE_URL;
  delete env.NODE_ENV;
  const ports = [await freePort(), await freePort()];
  const procs = ports.map((port) =>
    spawn(process.execPath, [path.join(ROOT, 'dist/src/server.js')], {
      cwd: ROOT,
      env: { ...env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const stderr = ['', ''];
  procs.forEach((proc, i) => proc.stderr!.on('data', (d) => (stderr[i] += d)));
  const exits = procs.map((proc) => new Promise<number | null>((resolve) => proc.on('exit', resolve)));
  try {
    // One of them exits (refused); the other answers /health.
    const refused = await Promise.race(exits.map((exit, i) => exit.then((code) => ({ i, code }))));
    expect(refused.code).toBe(1);
    const winner = 1 - refused.i;
    expect(stderr[refused.i].trim().split('\n')).toHaveLength(1);
    expect(stderr[refused.i]).toMatch(
      new RegExp(`^Failed to start: the embedded database in .* is in use by process ${procs[winner].pid} \\(server\\)\\. Stop it first`),
    );
    let healthy = false;
    for (let waited = 0; !healthy && waited < 600; waited++) {
      healthy = await fetch(`http://127.0.0.1:${ports[winner]}/health`).then((r) => r.ok, () => false);
      if (!healthy) await new Promise((r) => setTimeout(r, 200));
    }
    expect(healthy).toBe(true);
  } finally {
    for (const proc of procs) if (proc.exitCode === null) proc.kill('SIGTERM');
    await Promise.all(exits);
  }
  expect(postgresOf(dataDir)).toEqual([]);
  fs.rmSync(dataDir, { recursive: true, force: true });
}, 180_000);

test('a DATA_DIR written by PGlite (earlier versions) stops the start with one line saying what to do', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sso-pglite-'));
  // What PGlite leaves in DATA_DIR/pgdata: a PostgreSQL 18 layout written by a 32-bit WebAssembly build (no
  // embedded-postgres.json beside it).
  fs.mkdirSync(path.join(dataDir, 'pgdata', 'global'), { recursive: true });
  fs.writeFileSync(path.join(dataDir, 'pgdata', 'PG_VERSION'), '18\n');
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: String(await freePort()) };
  delete env.DATABASE_URL;
  delete env.NODE_ENV;
  const proc = spawn(process.execPath, [path.join(ROOT, 'dist/src/server.js')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  proc.stderr!.on('data', (d) => (err += d));
  const code = await new Promise<number | null>((resolve) => proc.on('exit', resolve));
  expect(code).toBe(1);
  expect(err.trim().split('\n')).toHaveLength(1);
  const pgdata = path.join(dataDir, 'pgdata');
  expect(err).toContain(`Failed to start: ${pgdata} was written by PGlite, the embedded database of earlier versions`);
  expect(err).toContain(`mv ${pgdata} ${pgdata}-pglite`);
  // Nothing was changed in it.
  expect(fs.readdirSync(pgdata).sort()).toEqual(['PG_VERSION', 'global']);
  fs.rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

test('a bad configuration value stops the process with one line naming the variable', async () => {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: 'not-a-port' };
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  proc.stderr!.on('data', (d) => (err += d));
  const code = await new Promise<number | null>((resolve) => proc.on('exit', resolve));
  expect(code).toBe(1);
  expect(err.trim()).toBe('Configuration error: PORT: must be a whole number');
}, 30_000);

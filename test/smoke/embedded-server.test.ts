import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../helpers/oauth';
import { buildOnce, postgresOf, ROOT, runCli, startServerProcess, type RunningServer } from '../helpers/processes';

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

/** Stops the server; a stop that is not clean fails with the end of the server's own log, which says why. */
const stop = async (running: RunningServer): Promise<number | null> => {
  const code = await running.stop();
  if (code !== 0) {
    // A signal's name when the process did not exit by itself (killed, or a native crash): the log may then be empty.
    const how = code === null ? `signal ${running.proc.signalCode}` : `code ${code}`;
    throw new Error(`the server exited with ${how} on SIGTERM; its log ends:\n${running.output().slice(-4000)}`);
  }
  return code;
};

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

    const reg = await fetch(
      `${first.base}/api/auth/register`,
      json({ first_name: 'Smoke', last_name: 'Test', email: 'smoke@example.test', password: 'smoke-pass' }),
    );
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

  // DATABASE_POOL_MAX above the embedded default: the embedded PostgreSQL takes as many connections as both pools
  // may open (at its default of 20 the pools' 45 would meet "too many clients" under parallel load, answered 503).
  const second = await startServer(dataDir, port, { DATABASE_POOL_MAX: '30', METRICS_TOKEN: 'metrics-token-0123456789' });
  try {
    const login = await fetch(`${second.base}/api/auth/login`, json({ email: 'smoke@example.test', password: 'smoke-pass' }));
    expect(login.status).toBe(200);
    expect(second.output()).not.toMatch(/migrations applied/);
    const metrics = await fetch(`${second.base}/metrics`, { headers: { authorization: 'Bearer metrics-token-0123456789' } });
    expect(await metrics.text()).toMatch(/^sso_db_pool_max 45$/m);
    const { accessToken } = (await login.json()) as { accessToken: string };
    const bearer = { headers: { authorization: `Bearer ${accessToken}` } };
    // Sessions listed (the query pool) and /me (the prepared statements' pool), 60 of each at once.
    const answers = await Promise.all(
      Array.from({ length: 60 }, () => [
        fetch(`${second.base}/api/auth/sessions`, bearer),
        fetch(`${second.base}/api/auth/me`, bearer),
      ]).flat(),
    );
    expect(answers.map((r) => r.status).filter((status) => status !== 200)).toEqual([]);
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
      healthy = await fetch(`http://127.0.0.1:${ports[winner]}/health`).then(
        (r) => r.ok,
        () => false,
      );
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

test('a command holding DATA_DIR: a second command is refused in one line, a starting server waits for it', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sso-busy-'));
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'info' };
  delete env.DATABASE_URL;
  delete env.NODE_ENV;
  // Stands for `npm run migrate` in progress: holds DATA_DIR's lock as a command until told to finish.
  const command = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/lock-contender.ts', dataDir, 'cli'], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let said = '';
  command.stdout!.on('data', (d) => (said += d));
  const commandExit = new Promise((resolve) => command.on('exit', resolve));
  const until = async (check: () => boolean, what: string) => {
    for (let waited = 0; !check(); waited++) {
      if (waited > 600) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  let server: ChildProcess | undefined;
  let output = '';
  try {
    await until(() => said.includes('ready'), 'the command');
    command.stdin!.write('go\n');
    await until(() => said.includes('acquired'), 'the lock');

    const second = await runCli('migrate', [], env);
    expect(second.code).toBe(1);
    expect(second.stderr).toBe(
      `The embedded database in ${dataDir} is in use by another command (pid ${command.pid}): run this one when it has finished.\n`,
    );

    const port = await freePort();
    const proc = spawn(process.execPath, [path.join(ROOT, 'dist/src/server.js')], {
      cwd: ROOT,
      env: { ...env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server = proc;
    proc.stdout!.on('data', (d) => (output += d));
    proc.stderr!.on('data', (d) => (output += d));
    // The server says what it waits for, and waits; when the command finishes, it starts.
    await until(() => /waiting for a command \(npm run …\) using the embedded database to finish/.test(output), 'the server to wait');
    expect(proc.exitCode).toBeNull();
    command.stdin!.write('done\n');
    await commandExit;
    await until(() => /service-sso listening/.test(output), 'the server to start');
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
  } finally {
    if (command.exitCode === null) command.kill('SIGTERM');
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server!.on('exit', resolve));
      server.kill('SIGTERM');
      // The server's own log is part of the failure message: it says why a stop was not clean.
      expect({ code: await exited, log: output }).toEqual({ code: 0, log: expect.any(String) });
    }
  }
  expect(postgresOf(dataDir)).toEqual([]);
  fs.rmSync(dataDir, { recursive: true, force: true });
}, 180_000);

test('PostgreSQL dying under the server stops the server; the next start runs', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sso-pgdies-'));
  const port = await freePort();
  const first = await startServer(dataDir, port);
  const exited = new Promise<number | null>((resolve) => first.proc.on('exit', resolve));
  const [postmaster] = fs.readFileSync(path.join(dataDir, 'pgdata', 'postmaster.pid'), 'utf8').split('\n');
  process.kill(Number(postmaster), 'SIGKILL');
  expect(await exited).toBe(1);
  expect(first.output()).toMatch(/the embedded PostgreSQL stopped: stopping the server/);

  const second = await startServer(dataDir, port);
  try {
    expect((await fetch(`${second.base}/health`)).status).toBe(200);
  } finally {
    expect(await stop(second)).toBe(0);
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

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../helpers/oauth';
import { buildOnce, ROOT, startServerProcess, type RunningServer } from '../helpers/processes';

/**
 * `npm start` on the embedded database (PGlite under DATA_DIR), as a newcomer runs it: the real server process of
 * the bundled build (what `npm start` runs), real HTTP. Start, register, login, me, graceful SIGTERM, restart on the
 * same data.
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

  const second = await startServer(dataDir, port);
  try {
    const login = await fetch(`${second.base}/api/auth/login`, json({ email: 'smoke@example.test', password: 'smoke-pass' }));
    expect(login.status).toBe(200);
    expect(second.output()).not.toMatch(/migrations applied/);
  } finally {
    expect(await stop(second)).toBe(0);
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
}, 330_000);

test('a bad configuration value stops the process with one line naming the variable', async () => {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: 'not-a-port' };
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  proc.stderr!.on('data', (d) => (err += d));
  const code = await new Promise<number | null>((resolve) => proc.on('exit', resolve));
  expect(code).toBe(1);
  expect(err.trim()).toBe('Configuration error: PORT: must be a whole number');
}, 30_000);

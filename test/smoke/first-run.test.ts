import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { launchChromium } from '../helpers/ensure-chromium';
import { freePort } from '../helpers/oauth';
import { postgresOf, ROOT, runCli, startServerProcess } from '../helpers/processes';

/**
 * A newcomer's first hour on the embedded database (real PostgreSQL under DATA_DIR), with real processes: `npm start`
 * logs a one-time setup link; the CLI works beside the running server (it connects to the server's PostgreSQL); a
 * second server on the same DATA_DIR is refused in one line; the /setup page in Chromium creates the first super_admin,
 * after which the link is dead; after a crash (SIGKILL) of the server, the PostgreSQL it left running does not block
 * the CLI or the next start.
 */
const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

test('npm start -> setup link -> /setup in a browser -> working admin; the CLI beside the server; a crash blocks nothing', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sso-first-run-'));
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'info' };
  delete env.DATABASE_URL;
  delete env.NODE_ENV;
  delete env.REDIS_URL;
  const port = await freePort();
  const server = await startServerProcess({ ...env, BASE_URL: `http://127.0.0.1:${port}` }, port);
  try {
    // The log is written asynchronously (SonicBoom): the line may reach the pipe a moment after /health answers.
    const linkIn = () => /(http:\/\/127\.0\.0\.1:\d+\/setup\?token=[A-Za-z0-9_-]{43})/.exec(server.output())?.[1];
    for (let waited = 0; !linkIn() && waited < 100; waited++) await new Promise((resolve) => setTimeout(resolve, 100));
    const link = linkIn();
    expect(link).toBeDefined();
    // Not a terminal: one JSON object per line.
    expect(server.output()).toMatch(/^\{"level":40,.*"msg":"No administrator yet: open http/m);
    expect(postgresOf(dataDir).length).toBeGreaterThan(0);

    // The CLI beside the running server: migrate and prune use the server's database; a second server on the same
    // DATA_DIR is refused in one line. (Run side by side: each is its own process.)
    const [migrate, prune, second] = await Promise.all([
      runCli('migrate', [], env),
      runCli('prune', [], env),
      freePort().then((p) => runCli('../server', [], { ...env, PORT: String(p) })),
    ]);
    expect(migrate).toMatchObject({ code: 0, stdout: 'Already up to date\n', stderr: '' });
    expect(prune.code).toBe(0);
    expect(prune.stdout).toMatch(/^sessions: 0$/m);
    expect(second.code).toBe(1);
    expect(second.stderr.trim().split('\n')).toHaveLength(1);
    expect(second.stderr).toMatch(/^Failed to start: the embedded database in .* is in use by process \d+ \(server\)\. Stop it first/);
    expect((await fetch(`${server.base}/health`)).status).toBe(200);

    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.goto(link!);
      await page.getByRole('heading', { name: 'Create the first administrator' }).waitFor();
      fs.mkdirSync(path.join(ROOT, 'test-output'), { recursive: true });
      await page.screenshot({ path: path.join(ROOT, 'test-output', 'setup-form.png'), fullPage: true });
      await page.getByLabel('Email').fill('Owner@Example.test');
      await page.getByLabel('First name').fill('Olga');
      await page.getByLabel('Last name').fill('Owner');
      await page.getByLabel('Password', { exact: true }).fill('owner-password');
      await page.getByLabel('Repeat the password').fill('owner-password');
      await page.getByRole('button', { name: 'Create administrator' }).click();
      await page.getByRole('heading', { name: 'Administrator created' }).waitFor();
      await page.screenshot({ path: path.join(ROOT, 'test-output', 'setup-done.png'), fullPage: true });

      // The link is dead now.
      const again = await page.goto(link!);
      expect(again?.status()).toBe(404);
      await page.getByRole('heading', { name: 'This setup link is not valid' }).waitFor();
    } finally {
      await browser.close();
    }

    const login = await fetch(`${server.base}/api/auth/login`, json({ email: 'owner@example.test', password: 'owner-password' }));
    expect(login.status).toBe(200);
    expect(((await login.json()) as { user: { adminRole: string; email_verified: boolean } }).user).toMatchObject({
      adminRole: 'super_admin',
      email_verified: true,
    });
    expect(server.output()).not.toContain('owner-password');

    // `npm run admin` while the server runs: the account it creates signs in through the running server at once.
    const admin = await runCli('admin', ['create-admin', '--email', 'cli@example.test', '--password', 'cli-password'], env);
    expect(admin.code).toBe(0);
    expect(admin.stdout).toMatch(/^Created super_admin cli@example\.test/m);
    expect((await fetch(`${server.base}/api/auth/login`, json({ email: 'cli@example.test', password: 'cli-password' }))).status).toBe(200);
  } finally {
    // A crash, not a clean stop: the lock file and the server's PostgreSQL stay behind.
    server.proc.kill('SIGKILL');
    await server.stop();
  }
  expect(fs.existsSync(path.join(dataDir, 'sso.lock'))).toBe(true);
  const leftover = postgresOf(dataDir);
  expect(leftover.length).toBeGreaterThan(0);

  // Neither blocks the CLI: it stops the PostgreSQL left running, runs on its own, stops it and releases DATA_DIR.
  const migrate = await runCli('migrate', [], env);
  expect(migrate).toMatchObject({ code: 0, stdout: 'Already up to date\n' });
  expect(leftover.filter((pid) => fs.existsSync(`/proc/${pid}`))).toEqual([]);
  const admin = await runCli('admin', ['create-admin', '--email', 'second@example.test', '--password', 'second-password'], env);
  expect(admin.code).toBe(0);
  expect(admin.stdout).toMatch(/^Created super_admin second@example\.test/m);
  expect(fs.existsSync(path.join(dataDir, 'sso.lock'))).toBe(false);
  expect(postgresOf(dataDir)).toEqual([]);

  // Admins exist: a restarted server logs no setup link.
  const port2 = await freePort();
  const restarted = await startServerProcess({ ...env, BASE_URL: `http://127.0.0.1:${port2}` }, port2);
  try {
    expect(restarted.output()).not.toMatch(/setup\?token=/);
    expect(
      (await fetch(`${restarted.base}/api/auth/login`, json({ email: 'second@example.test', password: 'second-password' }))).status,
    ).toBe(200);
  } finally {
    expect(await restarted.stop()).toBe(0);
  }
  expect(fs.existsSync(path.join(dataDir, 'sso.lock'))).toBe(false);
  expect(postgresOf(dataDir)).toEqual([]);
  fs.rmSync(dataDir, { recursive: true, force: true });
}, 330_000);

test('npm start in a terminal writes readable log lines (JSON when not a terminal)', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sso-tty-'));
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    PORT: String(port),
    BASE_URL: `http://127.0.0.1:${port}`,
  };
  delete env.DATABASE_URL;
  delete env.NODE_ENV;
  delete env.REDIS_URL;
  // util-linux `script` gives the server a pseudo-terminal, as a developer's shell does.
  const proc = spawn('script', ['-qfec', `${process.execPath} --import tsx src/server.ts`, '/dev/null'], {
    cwd: ROOT,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', resolve));
  try {
    const deadline = Date.now() + 60_000;
    while (!/service-sso listening/.test(out)) {
      if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`server did not start: ${out}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    // The lock file names the server's pid: stop it gracefully; `script` ends with it.
    const { pid } = JSON.parse(fs.readFileSync(path.join(dataDir, 'sso.lock'), 'utf8')) as { pid: number };
    process.kill(pid, 'SIGTERM');
    await exited;
  }
  const plain = out.replace(/\u001b\[[0-9;]*m/g, '');
  expect(plain).toMatch(/\d\d:\d\d:\d\d\.\d{3}\] WARN: No administrator yet: open http:\/\/127\.0\.0\.1:\d+\/setup\?token=/);
  expect(plain).toMatch(/INFO: service-sso listening/);
  expect(plain).not.toContain('{"level"');
  fs.rmSync(dataDir, { recursive: true, force: true });
}, 90_000);

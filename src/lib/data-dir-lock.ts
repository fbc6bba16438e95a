import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { parseJsonText } from './json-text';
import { thrownCode } from './thrown';

/**
 * One DATA_DIR has one owner of its embedded PostgreSQL at a time: the server, or a CLI command when no server runs
 * (a CLI beside a running server connects to the server's database instead, src/db/embedded-postgres.ts). The owner
 * holds DATA_DIR/sso.lock, a JSON file naming its pid and role and, once its database is up, the database's port.
 *
 * Exclusive even when processes start together: the lock file is written complete under a private name and then
 * published with link(2), which fails if the name exists, so two starters cannot both create it, and a reader never
 * sees it half-written. A lock whose process is gone (a crash, `kill -9`) is stale and taken over; the take-over
 * happens under a second lock (sso.lock.takeover, published the same way) and replaces the stale file only if it is
 * still the one found stale, so two processes that find the same stale lock cannot both take it. A lock naming this
 * very process (a container restarted with the same pid) is stale too.
 */
export const LOCK_FILE = 'sso.lock';
const TAKEOVER_FILE = 'sso.lock.takeover';

export type LockRole = 'server' | 'cli';

export interface LockHolder {
  pid: number;
  role: string;
  startedAt?: string;
  /** The port of the holder's embedded PostgreSQL (127.0.0.1), once it accepts connections. */
  databasePort?: number;
}

export class DataDirLockedError extends Error {
  override name = 'DataDirLockedError';
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder,
  ) {
    super(`the embedded database in ${dataDir} is in use by process ${holder.pid} (${holder.role})`);
  }
}

export interface DataDirLock {
  /** Records more about the holder (the database port) in the lock file, atomically. */
  update(extra: Pick<LockHolder, 'databasePort'>): void;
  /** Removes the lock file if it is still ours; idempotent. */
  release(): void;
}

export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    return thrownCode(err) === 'EPERM';
  }
}

/** The lock file as written: only the pid must be right for the lock to count; the rest is read leniently. */
const HOLDER_FILE = z.object({
  pid: z.number(),
  role: z.unknown().optional(),
  startedAt: z.unknown().optional(),
  databasePort: z.unknown().optional(),
});

function parseHolder(text: string | undefined): LockHolder | undefined {
  if (text === undefined) return undefined;
  const parsed = parseJsonText(text, HOLDER_FILE);
  if (!parsed) return undefined;
  return {
    pid: parsed.pid,
    role: String(parsed.role ?? 'unknown'),
    startedAt: typeof parsed.startedAt === 'string' ? parsed.startedAt : undefined,
    databasePort: typeof parsed.databasePort === 'number' ? parsed.databasePort : undefined,
  };
}

function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    if (thrownCode(err) === 'ENOENT') return undefined;
    throw err;
  }
}

/** The live holder of DATA_DIR's lock, if any (a stale lock has none). */
export function readLockHolder(dataDir: string): LockHolder | undefined {
  const holder = parseHolder(readText(path.join(dataDir, LOCK_FILE)));
  return holder && isAlive(holder.pid) ? holder : undefined;
}

/** Publishes `text` at `file` only if nothing is there (link(2)); false when something is. */
function publish(file: string, text: string): boolean {
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  fs.writeFileSync(temp, text, { mode: 0o644 });
  try {
    fs.linkSync(temp, file);
    return true;
  } catch (err) {
    if (thrownCode(err) === 'EEXIST') return false;
    throw err;
  } finally {
    fs.rmSync(temp, { force: true });
  }
}

function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Replaces the stale lock whose content was `staleText` by ours, under the take-over lock. Returns whether ours is
 * in place; false means another process changed the lock meanwhile (the caller looks again).
 */
function takeOver(file: string, staleText: string, mineText: string): boolean {
  const guard = path.join(path.dirname(file), TAKEOVER_FILE);
  if (!publish(guard, mineText)) {
    // Another process is taking over right now; its guard is stale only if it died in these few lines.
    const other = parseHolder(readText(guard));
    if (!other || !isAlive(other.pid)) fs.rmSync(guard, { force: true });
    pause(10);
    return false;
  }
  try {
    const current = readText(file);
    if (current !== undefined && current !== staleText) return false;
    fs.rmSync(file, { force: true });
    return publish(file, mineText);
  } finally {
    fs.rmSync(guard, { force: true });
  }
}

/** Takes the lock for this process or throws DataDirLockedError naming the live holder. */
export function acquireDataDirLock(dataDir: string, role: LockRole): DataDirLock {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, LOCK_FILE);
  let mine: LockHolder = { pid: process.pid, role, startedAt: new Date().toISOString() };
  for (let attempt = 0; ; attempt++) {
    const mineText = JSON.stringify(mine);
    if (publish(file, mineText)) break;
    const text = readText(file);
    if (text === undefined) continue; // released meanwhile: try again
    const holder = parseHolder(text);
    if (holder && isAlive(holder.pid)) throw new DataDirLockedError(dataDir, holder);
    // Stale (its process is gone) or unreadable (damaged): replace it, unless someone else does first.
    if (takeOver(file, text, mineText)) break;
    if (attempt >= 50) throw new Error(`could not take ${file}`);
  }
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    process.removeListener('exit', release);
    if (parseHolder(readText(file))?.pid === process.pid) fs.rmSync(file, { force: true });
  };
  // However the process ends short of a crash, the lock goes with it.
  process.on('exit', release);
  return {
    update(extra) {
      if (released) return;
      mine = { ...mine, ...extra };
      const temp = `${file}.${process.pid}.update`;
      fs.writeFileSync(temp, JSON.stringify(mine), { mode: 0o644 });
      fs.renameSync(temp, file);
    },
    release,
  };
}

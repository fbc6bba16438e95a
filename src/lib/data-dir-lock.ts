import fs from 'node:fs';
import path from 'node:path';

/**
 * The embedded database (PGlite) must be opened by one process at a time: two processes on the same directory
 * do not see each other's writes and can corrupt it. Every process that opens it (the server, `npm run admin`,
 * `migrate`, `prune`) first takes DATA_DIR/sso.lock, created exclusively and holding its pid. A lock whose process
 * is gone (a crash, `kill -9`) is stale and taken over, so a crash never blocks the next start; a lock naming this
 * very process (a container restarted with the same pid) is stale too.
 */
export const LOCK_FILE = 'sso.lock';

export interface LockHolder {
  pid: number;
  role: string;
  startedAt?: string;
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
  /** Removes the lock file if it is still ours; idempotent. */
  release(): void;
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readHolder(file: string): LockHolder | undefined {
  try {
    const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<LockHolder>;
    return typeof parsed.pid === 'number' ? { pid: parsed.pid, role: String(parsed.role ?? 'unknown'), startedAt: parsed.startedAt } : undefined;
  } catch {
    return undefined;
  }
}

/** Takes the lock for this process or throws DataDirLockedError naming the live holder. */
export function acquireDataDirLock(dataDir: string, role: 'server' | 'cli'): DataDirLock {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, LOCK_FILE);
  const mine: LockHolder = { pid: process.pid, role, startedAt: new Date().toISOString() };
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      fs.writeFileSync(file, JSON.stringify(mine), { flag: 'wx', mode: 0o644 });
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        process.removeListener('exit', release);
        if (readHolder(file)?.pid === process.pid) fs.rmSync(file, { force: true });
      };
      // However the process ends short of a crash, the lock goes with it.
      process.on('exit', release);
      return { release };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = readHolder(file);
    if (holder && isAlive(holder.pid)) throw new DataDirLockedError(dataDir, holder);
    // Stale (its process is gone) or unreadable (a writer that died mid-write): remove and try again.
    fs.rmSync(file, { force: true });
  }
  throw new Error(`could not take ${file}`);
}

import type { Config } from '../config';
import { acquireDataDirLock, DataDirLockedError } from '../lib/data-dir-lock';

/**
 * Runs a CLI command that opens the database. On the embedded database it first takes the DATA_DIR lock; while a
 * server (or another command) holds it, the command stops with one line saying what to do, before opening
 * anything. With DATABASE_URL, PostgreSQL itself serialises concurrent writers and no lock is needed.
 */
export async function withDatabaseLock<T>(config: Pick<Config, 'databaseUrl' | 'dataDir'>, run: () => Promise<T>): Promise<T> {
  if (config.databaseUrl) return run();
  let lock;
  try {
    lock = acquireDataDirLock(config.dataDir, 'cli');
  } catch (err) {
    if (!(err instanceof DataDirLockedError)) throw err;
    const who = err.holder.role === 'server' ? `a running server (pid ${err.holder.pid})` : `another command (pid ${err.holder.pid})`;
    process.stderr.write(
      `The embedded database in ${config.dataDir} is in use by ${who}: stop the server first, or create the first admin at /setup (the link is in the server log).\n`,
    );
    process.exit(1);
  }
  try {
    return await run();
  } finally {
    lock.release();
  }
}

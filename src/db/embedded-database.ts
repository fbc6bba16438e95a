import { acquireDataDirLock, DataDirLockedError, readLockHolder, type LockHolder } from '../lib/data-dir-lock';
import { runningEmbeddedUrl, startEmbeddedPostgres, type EmbeddedOptions } from './embedded-postgres';

/**
 * Who runs the embedded PostgreSQL of a DATA_DIR (DATABASE_URL unset), and how the others reach it:
 * - the server owns it: it takes DATA_DIR's lock, starts PostgreSQL, records its port in the lock, and stops it when
 *   it stops; a second server on the same DATA_DIR is refused (DataDirLockedError);
 * - a CLI command (`npm run admin`, `migrate`, `prune`) beside a running server connects to the server's PostgreSQL;
 *   with no server running it owns one for its own run, the same way as a server. While it does, a starting server
 *   waits for it, and a second command is refused (two commands each need the database only for seconds).
 */
export interface OpenedDatabase {
  url: string;
  /** Whether this process started the database (false: it connects to a running server's). */
  owned: boolean;
  /** Stops the database this process started and releases DATA_DIR; nothing for a connection to a server's. */
  close(): Promise<void>;
}

/** A command holds DATA_DIR: a starting server waits this long for it to finish before giving up. */
const WAIT_FOR_COMMAND_MS = 60_000;
/** A server holds DATA_DIR but its database is not up yet (a first start runs initdb): a command waits this long. */
const WAIT_FOR_SERVER_MS = 60_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function own(dataDir: string, role: 'server' | 'cli', options: EmbeddedOptions): Promise<OpenedDatabase> {
  const lock = acquireDataDirLock(dataDir, role);
  try {
    const started = Date.now();
    const postgres = await startEmbeddedPostgres(dataDir, options);
    lock.update({ databasePort: postgres.port });
    options.logger?.info({ port: postgres.port, ms: Date.now() - started }, 'embedded PostgreSQL started');
    return {
      url: postgres.url,
      owned: true,
      close: async () => {
        await postgres.stop();
        lock.release();
      },
    };
  } catch (err) {
    lock.release();
    throw err;
  }
}

/** The server's way in: owns DATA_DIR's database, or throws DataDirLockedError naming the server that does. */
export async function openEmbeddedForServer(dataDir: string, options: EmbeddedOptions = {}): Promise<OpenedDatabase> {
  const deadline = Date.now() + WAIT_FOR_COMMAND_MS;
  let announced = false;
  for (;;) {
    try {
      return await own(dataDir, 'server', options);
    } catch (err) {
      if (!(err instanceof DataDirLockedError) || err.holder.role !== 'cli' || Date.now() > deadline) throw err;
      if (!announced) {
        announced = true;
        options.logger?.warn({ pid: err.holder.pid }, 'waiting for a command (npm run …) using the embedded database to finish');
      }
      await sleep(200);
    }
  }
}

/** Another command owns DATA_DIR: the CLI says so in one line and does not wait. */
export class EmbeddedDatabaseBusyError extends Error {
  override name = 'EmbeddedDatabaseBusyError';
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder,
  ) {
    super(`the embedded database in ${dataDir} is in use by another command (pid ${holder.pid}): run this one when it has finished`);
  }
}

/** A CLI command's way in: the running server's database, or its own for the command's run. */
export async function openEmbeddedForCli(dataDir: string): Promise<OpenedDatabase> {
  const deadline = Date.now() + WAIT_FOR_SERVER_MS;
  for (;;) {
    const holder = readLockHolder(dataDir);
    if (holder?.role === 'server') {
      if (holder.databasePort !== undefined) {
        return { url: runningEmbeddedUrl(dataDir, holder.databasePort), owned: false, close: async () => {} };
      }
      // The server is starting its database: its port is recorded in a moment.
      if (Date.now() > deadline) throw new Error(`the server (pid ${holder.pid}) holding ${dataDir} did not start its database`);
      await sleep(200);
      continue;
    }
    if (holder) throw new EmbeddedDatabaseBusyError(dataDir, holder);
    try {
      return await own(dataDir, 'cli', {});
    } catch (err) {
      // A server or another command took DATA_DIR at the same moment: look again.
      if (!(err instanceof DataDirLockedError)) throw err;
    }
  }
}

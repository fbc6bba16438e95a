import type { Config } from '../config';
import { EmbeddedDatabaseBusyError, openEmbeddedForCli } from '../db/embedded-database';
import { EmbeddedDatabaseError } from '../db/embedded-postgres';

/**
 * Runs a CLI command against the database: DATABASE_URL when set; else the embedded PostgreSQL of DATA_DIR, the
 * running server's when a server runs (PostgreSQL serves both at once), or one started for this command's run. When
 * another command holds DATA_DIR, the command stops with one line before opening anything.
 */
export async function withDatabase<T>(config: Config, run: (config: Config) => Promise<T>): Promise<T> {
  if (config.databaseUrl) return run(config);
  let opened;
  try {
    opened = await openEmbeddedForCli(config.dataDir);
  } catch (err) {
    if (!(err instanceof EmbeddedDatabaseBusyError) && !(err instanceof EmbeddedDatabaseError)) throw err;
    process.stderr.write(`${err.message[0].toUpperCase()}${err.message.slice(1)}.\n`);
    process.exit(1);
  }
  try {
    return await run({ ...config, databaseUrl: opened.url });
  } finally {
    await opened.close();
  }
}

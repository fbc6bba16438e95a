import { ConfigError, loadConfig } from '../config';
import { thrownMessage } from '../lib/thrown';
import { createDb, migrateLatest } from '../db';
import { withDatabase } from './with-database';

/** `npm run migrate`: applies pending migrations to DATABASE_URL (or the embedded database) and exits. */
async function main(): Promise<void> {
  const config = loadConfig();
  await withDatabase(config, async (config) => {
    const db = createDb(config);
    try {
      const applied = await migrateLatest(db);
      process.stdout.write(applied.length ? `Applied: ${applied.join(', ')}\n` : 'Already up to date\n');
    } finally {
      await db.destroy();
    }
  });
}

main().catch((err) => {
  process.stderr.write(`${err instanceof ConfigError ? 'Configuration error' : 'Migration failed'}: ${thrownMessage(err)}\n`);
  process.exit(1);
});

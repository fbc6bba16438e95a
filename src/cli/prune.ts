import { ConfigError, loadConfig } from '../config';
import { thrownMessage } from '../lib/thrown';
import { migrateLatest } from '../db';
import { closeServiceContext, createServiceContext } from '../create-context';
import { pruneExpired } from '../services/prune.service';
import { withDatabase } from './with-database';

/** `npm run prune`: deletes expired and long-revoked rows once (the server also does it on a timer) and exits. */
async function main(): Promise<void> {
  const config = loadConfig();
  await withDatabase(config, async (config) => {
    const ctx = createServiceContext(config);
    try {
      await migrateLatest(ctx.db);
      const counts = await pruneExpired(ctx);
      for (const [table, n] of Object.entries(counts)) process.stdout.write(`${table}: ${n}\n`);
    } finally {
      await closeServiceContext(ctx);
    }
  });
}

main().catch((err) => {
  process.stderr.write(`${err instanceof ConfigError ? 'Configuration error' : 'Pruning failed'}: ${thrownMessage(err)}\n`);
  process.exit(1);
});

import type { Knex } from 'knex';
import { migrationSource } from './migrations';
import { loadConfig } from './src/config';

/**
 * For the knex CLI (`npx knex --knexfile knexfile.ts migrate:status`). The service itself runs migrations at
 * start and through `npm run migrate`; both use the same ordered list in migrations/index.ts. The CLI needs a
 * PostgreSQL server: set DATABASE_URL.
 */
const config = loadConfig();
if (!config.databaseUrl) throw new Error('knexfile: set DATABASE_URL (the embedded database is only reachable from the service)');

const knexConfig: Knex.Config = {
  client: 'pg',
  connection: config.databaseUrl,
  migrations: { migrationSource },
};

export default knexConfig;

#!/usr/bin/env node
// The PGlite candidate of bench/embedded-footprint.ts: the compiled server's own modules (dist/src, `npm run build`)
// on the embedded database this project used before embedded PostgreSQL, PGlite (WebAssembly PostgreSQL in this
// process, one connection through knex-pglite). PGLITE_TUNED=1 applies the memory options (small shared_buffers,
// work_mem, temp_buffers; `initialMemory` cannot go below PGlite's 128 MB: its WebAssembly module declares that
// minimum); unset, PGlite's defaults (what `npm start` ran before).
// Not part of the product: @electric-sql/pglite and knex-pglite are dev dependencies kept for this comparison.
'use strict';
const path = require('node:path');
const fs = require('node:fs');

const dist = path.resolve(__dirname, '..', 'dist', 'src');
const { loadConfig } = require(path.join(dist, 'config'));
const { migrateLatest } = require(path.join(dist, 'db'));
const { createServiceContext, closeServiceContext } = require(path.join(dist, 'create-context'));
const { currentSigningKey } = require(path.join(dist, 'services', 'oidc', 'signing-keys.service'));
const { createApp } = require(path.join(dist, 'app'));
const { createHttpServer } = require(path.join(dist, 'lib', 'http-server'));
const { tuneHeap } = require(path.join(dist, 'lib', 'heap-tuning'));

async function main() {
  tuneHeap();
  const config = loadConfig();
  const { PGlite } = await import('@electric-sql/pglite');
  const ClientPgLite = require('knex-pglite');
  const knex = require('knex');
  const dataDir = path.join(config.dataDir, 'pglite');
  fs.mkdirSync(dataDir, { recursive: true });
  const tuned = process.env.PGLITE_TUNED === '1';
  const pglite = new PGlite({
    dataDir,
    ...(tuned
      ? {
          startParams: [
            '--single',
            '-F',
            '-O',
            '-j',
            '-c',
            'search_path=public',
            '-c',
            'exit_on_error=false',
            '-c',
            'log_checkpoints=false',
            '-c',
            'max_worker_processes=0',
            '-c',
            'max_parallel_workers=0',
            '-c',
            'max_parallel_workers_per_gather=0',
            '-c',
            'io_method=sync',
            '-c',
            'max_parallel_maintenance_workers=0',
            '-c',
            'shared_buffers=8MB',
            '-c',
            'work_mem=1MB',
            '-c',
            'temp_buffers=1MB',
            '-c',
            'maintenance_work_mem=8MB',
          ],
        }
      : {}),
  });
  await pglite.waitReady;
  const db = knex({ client: ClientPgLite, dialect: 'postgres', connection: { pglite } });
  const ctx = createServiceContext(config, { db });
  await migrateLatest(ctx.db);
  await currentSigningKey(ctx);
  const server = createHttpServer(createApp({ ctx }));
  server.listen(config.port, () => process.stdout.write(`listening on ${config.port} (PGlite${tuned ? ', tuned' : ''})\n`));
  process.on('SIGTERM', () =>
    server.close(async () => {
      await closeServiceContext(ctx);
      process.exit(0);
    }),
  );
}

main().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});

// The refresh rotation's statement alone (ROTATE_SQL of the build, as the server prepares it): rotations per second
// and PostgreSQL's CPU per rotation, with no HTTP server in between (docs/performance.md "What a slower machine changes").
// Usage: DATABASE_URL=<a migrated database on this machine> node bench/rotation-statement.cjs [SECONDS] [CHAINS]
// PGOPTIONS="-c plan_cache_mode=force_custom_plan" sets a PostgreSQL setting on every connection (a variant to compare).
// It writes one user, one client, its grant and CHAINS sessions, and deletes them at the end.
'use strict';
const path = require('node:path');
const { randomUUID } = require('node:crypto');
const { Pool } = require('pg');
const { postgresCpuMs, postmasterOf } = require('./proc-cpu.cjs');

const { ROTATE_SQL } = require(path.join(__dirname, '../dist/src/db/repositories/refresh-tokens.repo.js'));
const seconds = Number(process.argv[2] ?? 6);
const chains = Number(process.argv[3] ?? 16);
if (!process.env.DATABASE_URL) throw new Error('DATABASE_URL: a migrated database on this machine');
const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 5, options: process.env.PGOPTIONS });

async function main() {
  const { rows } = await pool.query('select pg_backend_pid() as pid');
  const postmaster = postmasterOf(rows[0].pid);
  if (postmaster === undefined) throw new Error('DATABASE_URL: PostgreSQL must run on this machine (its CPU is read from /proc)');
  const userId = randomUUID();
  const clientId = `bench-rotation-${randomUUID()}`;
  await pool.query('insert into users (id, email) values ($1, $2)', [userId, `${userId}@example.test`]);
  await pool.query("insert into oauth_clients (client_id, name, secret_hash) values ($1, 'Rotation bench', 'x')", [clientId]);
  await pool.query("insert into oauth_grants (user_id, client_id, scope) values ($1, $2, 'openid')", [userId, clientId]);
  const live = [];
  for (let i = 0; i < chains; i++) {
    const sessionId = randomUUID();
    const tokenId = randomUUID();
    await pool.query(
      "insert into sessions (id, user_id, client_id, scope, expires_at) values ($1, $2, $3, 'openid', now() + interval '1 day')",
      [sessionId, userId, clientId],
    );
    await pool.query("insert into refresh_tokens (id, session_id, expires_at) values ($1, $2, now() + interval '1 day')", [
      tokenId,
      sessionId,
    ]);
    live.push({ sessionId, tokenId });
  }
  let rotations = 0;
  let stop = false;
  const chain = async (c) => {
    while (!stop) {
      const successor = randomUUID();
      const now = new Date();
      const values = [c.sessionId, userId, c.tokenId, now, successor, 86400, 30 * 86400, null, new Date(now.getTime() - 60000)];
      const r = await pool.query({ name: 'bench_rotate', text: ROTATE_SQL, values });
      if (r.rows.length !== 1) throw new Error('a rotation was refused');
      c.tokenId = successor;
      rotations++;
    }
  };
  const cpuFrom = postgresCpuMs(postmaster);
  const started = performance.now();
  const running = live.map(chain);
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  stop = true;
  await Promise.all(running);
  const elapsed = (performance.now() - started) / 1000;
  const cpu = postgresCpuMs(postmaster) - cpuFrom;
  process.stdout.write(
    `${Math.round(rotations / elapsed)} rotations/s, PostgreSQL CPU ${(cpu / rotations).toFixed(3)} ms per rotation` +
      ` (${rotations} rotations, ${chains} chains, ${elapsed.toFixed(1)} s${process.env.PGOPTIONS ? `, ${process.env.PGOPTIONS}` : ''})\n`,
  );
  await pool.query('delete from users where id = $1', [userId]);
  await pool.query('delete from oauth_clients where client_id = $1', [clientId]);
  await pool.end();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

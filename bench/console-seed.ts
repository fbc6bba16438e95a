/**
 * The console-at-scale data set (issue 23 "Scale"): USERS users and AUDIT_ROWS audit events written straight into a
 * migrated database with `insert … select … from generate_series` (seconds, not minutes). Used by `npm run bench
 * -- --only consoleUsers,…` and runnable alone against a scratch database to look at query plans:
 *
 *   DATABASE_URL=postgres://…/scratch npm run migrate && npx tsx bench/console-seed.ts postgres://…/scratch
 *
 * The shape is what a busy instance looks like: creation times with ties (many users per second, as an import
 * makes), 5 % deactivated, a few admins; events over 90 days, mostly sign-ins, each done by or concerning a random
 * user, with a handful of very active actors (an admin's own trail is long).
 */
import knexFactory, { type Knex } from 'knex';

export const SEED_USERS = Number(process.env.BENCH_CONSOLE_USERS ?? 100_000);
export const SEED_AUDIT_ROWS = Number(process.env.BENCH_CONSOLE_AUDIT_ROWS ?? 1_000_000);

/** The event types of the seed and their share of rows (all real types of services/events.ts). */
const TYPE_MIX: Array<[string, number]> = [
  ['auth.login.succeeded', 50],
  ['auth.login.failed', 15],
  ['oauth.token.issued', 12],
  ['auth.logout', 8],
  ['auth.session.revoked', 4],
  ['user.changed', 4],
  ['auth.password.changed', 2],
  ['oauth.consent.granted', 2],
  ['auth.register', 1],
  ['mfa.factor.added', 1],
  ['auth.login.locked', 1],
];

export interface SeedFigures {
  users: number;
  auditRows: number;
  seconds: number;
}

/**
 * Seeds a migrated database. Users are `seed-<n>@example.test`; the first names cycle through a short list so that
 * a name search matches thousands of rows and an email search one.
 */
export async function seedConsoleScale(db: Knex, users = SEED_USERS, auditRows = SEED_AUDIT_ROWS): Promise<SeedFigures> {
  const started = performance.now();
  // Bulk loading into indexed tables is index maintenance row by row: the secondary indexes (not those of a primary
  // key or a unique constraint) are dropped first and built again after the load, exactly as the migrations made them.
  const secondary = (await db.raw(
    `select i.indexname, i.indexdef from pg_indexes i join pg_index x on x.indexrelid = format('%I.%I', i.schemaname, i.indexname)::regclass
      where i.schemaname = current_schema() and i.tablename in ('users', 'audit_events') and not x.indisunique`,
  )) as { rows: Array<{ indexname: string; indexdef: string }> };
  for (const { indexname } of secondary.rows) await db.raw('drop index ??', [indexname]);
  const typeArray = TYPE_MIX.flatMap(([t, share]) => Array<string>(share).fill(t));
  // Ids are computed from the row number (a v4-shaped uuid from md5), so that events can name users without a join.
  // A temporary function lives on this connection only (the pool has one).
  await db.raw(`
    create function pg_temp.seed_user_id(n bigint) returns uuid language sql immutable as $$
      select (substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-4' || substr(h, 14, 3) || '-8' || substr(h, 18, 3) || '-' || substr(h, 21, 12))::uuid
        from md5('seed-user-' || n) h
    $$`);
  await db.raw(
    // created_at: 50 users a second, so timestamps tie (the keyset tie-break is exercised).
    `insert into users (id, email, first_name, last_name, password_hash, is_active, email_verified, created_at, updated_at, last_login_at)
     select pg_temp.seed_user_id(g),
            'seed-' || g || '@example.test',
            (array['Ada','Grace','Alan','Edsger','Barbara','Donald','Frances','Ken','Radia','Tim'])[1 + g % 10],
            (array['Lovelace','Hopper','Turing','Dijkstra','Liskov','Knuth','Allen','Thompson','Perlman','Berners-Lee'])[1 + (g / 10) % 10]
              || ' ' || (g % 997),
            null,
            g % 20 <> 0,
            g % 3 <> 0,
            date_trunc('second', now()) - make_interval(secs => (? - g) / 50),
            date_trunc('second', now()) - make_interval(secs => (? - g) / 50),
            case when g % 4 = 0 then null else now() - make_interval(secs => g % 86400) end
       from generate_series(1, ?::bigint) g`,
    [users, users, users],
  );
  // A few admins (the admin-tier filter): every 5000th seeded user holds the global admin role.
  await db.raw(
    `insert into user_roles (user_id, role_id)
     select pg_temp.seed_user_id(g), r.id from roles r, generate_series(5000, ?::bigint, 5000) g
      where r.name = 'admin' and r.application is null
     on conflict do nothing`,
    [users],
  );
  // Events over 90 days, each by a random user (1 in 7 by the system, 1 in 50 by one of ten busy actors) and
  // concerning another.
  await db.raw(
    `insert into audit_events (occurred_at, type, actor_id, subject_id, client_id, ip, user_agent, request_id, detail)
     select now() - make_interval(secs => (? - g) * 7776000.0 / ?),
            (?::text[])[1 + (g * 7919) % ?],
            case when g % 50 = 0 then pg_temp.seed_user_id(1 + (g / 50) % 10)::text
                 when g % 7 = 0 then null
                 else pg_temp.seed_user_id(1 + (g * 104729) % ?)::text end,
            pg_temp.seed_user_id(1 + (g * 15485863) % ?)::text,
            case when g % 3 = 0 then 'seed-client' else null end,
            '10.' || (g % 256) || '.' || ((g / 256) % 256) || '.' || (g % 7),
            'Mozilla/5.0 (seed)',
            null,
            '{}'::jsonb
       from generate_series(1, ?::bigint) g`,
    [auditRows, auditRows, typeArray, typeArray.length, users, users, auditRows],
  );
  await db.raw(`set maintenance_work_mem = '256MB'`);
  for (const { indexdef } of secondary.rows) await db.raw(indexdef);
  // What autovacuum does to a table that has been written: statistics and the visibility map (index-only scans).
  await db.raw('vacuum (analyze) users, user_roles, audit_events');
  return { users, auditRows, seconds: (performance.now() - started) / 1000 };
}

if (require.main === module) {
  const url = process.argv[2] ?? process.env.DATABASE_URL;
  if (!url) throw new Error('usage: tsx bench/console-seed.ts DATABASE_URL');
  const db = knexFactory({ client: 'pg', connection: url, pool: { min: 0, max: 1 } });
  seedConsoleScale(db)
    .then((f) => console.log(`seeded ${f.users} users and ${f.auditRows} audit events in ${f.seconds.toFixed(1)} s`))
    .finally(() => db.destroy());
}

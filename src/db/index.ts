import knexFactory, { Knex } from 'knex';
import type { Pool as PgPool } from 'pg';
import { migrationSource } from '../../migrations';
import type { Config } from '../config';
import { serviceUnavailable } from '../errors';
import type { Logger } from '../lib/logger';
import { thrownCode } from '../lib/thrown';
import { isConnectionError, isRetryableTransactionError } from './pg-errors';

export type Db = Knex;

/**
 * A table (Knex's `Tables`, declared by each repository beside its record) whose jsonb columns `K` are written as
 * JSON text and read back parsed by pg. Writes may leave out any column (as with a plain table's record): the database
 * has its defaults and constraints.
 */
export type JsonColumns<R, K extends keyof R> = Knex.CompositeTableType<R, Partial<Omit<R, K> & { [P in K]: string }>>;

/** A Knex instance or a transaction: repositories accept either. */
export type DbOrTrx = Knex | Knex.Transaction;

/**
 * PostgreSQL through `pg`: DATABASE_URL, or the embedded PostgreSQL's URL (db/embedded-database.ts opens it for the
 * server and the CLI before this is called). A database that is down or hangs while connecting fails a request within
 * pg's 1.5 s connection timeout (Knex propagates the failed connect to the waiting query at once). The acquire timeout
 * is how long a request may queue for a busy pool: 5 s lets a burst (30 parallel refreshes of one token, each waiting
 * for the winner's row lock) drain instead of shedding 503s after 1.5 s; /health has its own 900 ms probe timeout.
 */
export function createDb(config: Pick<Config, 'databaseUrl' | 'databasePoolMax'>, options: { poolMax?: number; logger?: Logger } = {}): Db {
  if (!config.databaseUrl) throw new Error('createDb: no database URL (the embedded database is opened first, db/embedded-database.ts)');
  // Knex logs connection trouble with console.log by default; route it to the service log (no SQL bindings).
  const log = {
    warn: (m: unknown) => options.logger?.warn({ knex: String(m) }, 'database warning'),
    error: (m: unknown) => options.logger?.error({ knex: String(m) }, 'database error'),
    deprecate: () => undefined,
    debug: () => undefined,
  };
  // DATABASE_POOL_MAX wins over the caller's default (the embedded database's smaller one).
  const max = config.databasePoolMax ?? options.poolMax ?? 10;
  const db = knexFactory({
    log,
    client: 'pg',
    connection: { connectionString: config.databaseUrl, connectionTimeoutMillis: CONNECT_TIMEOUT_MS },
    pool: { min: 0, max },
    acquireConnectionTimeout: ACQUIRE_TIMEOUT_MS,
  });
  attachStatementPool(db, config.databaseUrl, Math.ceil(max / 2), options.logger);
  return db;
}

/** A connection to a database that is down or hangs fails within this (pg's `connectionTimeoutMillis`). */
const CONNECT_TIMEOUT_MS = 1500;
/** How long a statement may queue for a busy pool (see createDb). */
const ACQUIRE_TIMEOUT_MS = 5000;

/** `pg`, loaded when the first statement pool is made (the entry has loaded it once already: lib/postgres-driver.ts). */
const loadPg = (): typeof import('pg') => require('pg');

/** The statement pool of a Db made by createDb: the pool if it is open, and the pool opened if need be. */
interface StatementPool {
  /** Its size (connections at most), whether open or not. */
  max: number;
  current(): PgPool | undefined;
  open(): PgPool;
}

/** The pool of each Db made by createDb for its named prepared statements (preparedRows). */
const statementPools = new WeakMap<Db, StatementPool>();

/**
 * The named prepared statements (preparedRows, the hottest statements: a Bearer request's principal, a refresh's
 * rotation) run on `pg`'s own pool, beside Knex's: at most `max` connections (half of Knex's, rounded up: 5 beside 10,
 * 3 beside the embedded database's 5; each statement holds its connection for one round trip), opened on demand,
 * 1.5 s to connect, 5 s to wait for a free one. Knex's pool (tarn) makes about 25 promises per acquire and release
 * (its pending operation and timeout, its asynchronous validation); pg-pool hands an idle client over with one or
 * two. About 6–9 % less CPU per `GET /api/auth/me` (docs/performance.md, "The hot prepared statements on pg's own
 * pool"). The pool is made at first use, ended when the Db is destroyed, and not made again after that; from then on
 * both pools refuse a statement at once (503).
 */
function attachStatementPool(db: Db, connectionString: string, max: number, logger: Logger | undefined): void {
  let pool: PgPool | undefined;
  let destroyed = false;
  const open = (): PgPool => {
    if (pool) return pool;
    if (destroyed) throw serviceUnavailable(new Error('preparedRows: the Db was destroyed'));
    const { Pool, Client } = loadPg();
    // pg-pool's connectionTimeoutMillis bounds the wait for a free client; each new client connects within its own.
    class StatementClient extends Client {
      constructor(options?: import('pg').ClientConfig) {
        super({ ...options, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
      }
    }
    pool = new Pool({
      connectionString,
      max,
      connectionTimeoutMillis: ACQUIRE_TIMEOUT_MS,
      idleTimeoutMillis: 30_000,
      Client: StatementClient,
    });
    // An idle client whose connection dropped: pg-pool removes it; without a listener the error would end the process.
    pool.on('error', (err) => logger?.warn({ err: { message: err.message } }, 'database warning: an idle statement connection failed'));
    return pool;
  };
  statementPools.set(db, { max, current: () => pool, open });
  // From the start of destroy, Knex's pool is refused as the statement pool is (503): tarn.js keeps an acquire that
  // comes while it is being destroyed (a request's read still running after its answer) waiting for the whole acquire
  // timeout, whose timer holds the process that closed the Db for 5 s. One that came earlier is served or aborted.
  const acquireConnection = db.client.acquireConnection.bind(db.client);
  db.client.acquireConnection = () => {
    if (destroyed) return Promise.reject(serviceUnavailable(new Error('Knex: the Db was destroyed')));
    return acquireConnection();
  };
  const destroyClient = db.client.destroy.bind(db.client);
  db.client.destroy = async (callback?: unknown) => {
    const ending = pool;
    pool = undefined;
    destroyed = true;
    if (ending) await ending.end();
    return destroyClient(callback);
  };
}

export async function migrateLatest(db: Db): Promise<string[]> {
  // Knex types the result `any`: [batch number, file names applied].
  const [, applied]: [number, string[]] = await db.migrate.latest({ migrationSource });
  return applied;
}

/** Attempts of a transaction that keeps losing deadlock or serialization races before the caller gets a 503. */
export const TRANSACTION_ATTEMPTS = 4;

/**
 * What withTransaction throws when `fn` rolled its transaction back without an error (`trx.rollback()`): nothing was
 * committed, so there is no result to return and nothing recorded in it is published (commitOf rejects).
 */
export class TransactionRolledBack extends Error {
  constructor() {
    super('The transaction was rolled back');
    this.name = 'TransactionRolledBack';
  }
}

/**
 * Knex resolves a transaction rolled back without an error (`trx.rollback()`) like a committed one, unless told not
 * to: with `doNotRejectOnRollback: false` it rejects, so the caller and every after-commit consumer (commitOf: the event
 * bus's log and metrics, the client cache) see a rollback as one. Given to every transaction and savepoint opened here.
 */
const TRANSACTION_CONFIG: Knex.TransactionConfig = { doNotRejectOnRollback: false };

/** Knex's rejection of a transaction rolled back without an error (knex/lib/execution/transaction.js). */
function isRollbackWithoutError(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('Transaction rejected with non-error');
}

/**
 * Runs `fn` in one transaction (a savepoint when `db` is a transaction). A deadlock or serialization failure (the
 * transaction was rolled back, so nothing happened) is retried after a short random pause, then reported as 503
 * service_unavailable, never a 500 (CONTRACT §8). `fn` must therefore have no side effect outside the database: mail,
 * events and logs of the outcome belong after the commit. A rollback without an error is never a success: it throws
 * TransactionRolledBack, and nothing recorded in the transaction is published.
 */
export async function withTransaction<T>(db: Db, fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return retryingConflicts(async () => {
    try {
      return await db.transaction(fn, TRANSACTION_CONFIG);
    } catch (err) {
      if (isRollbackWithoutError(err)) throw new TransactionRolledBack();
      throw err;
    }
  });
}

/**
 * When `db` is a transaction: a promise that resolves when its work is committed and rejects when it is rolled back;
 * undefined for the pool, where every statement is committed on its own. For a nested transaction (a savepoint) the
 * work is committed only when the outermost transaction commits, and rolled back when the savepoint or any
 * transaction around it rolls back: the release of a savepoint commits nothing yet.
 */
export function commitOf(db: DbOrTrx): Promise<unknown> | undefined {
  if (!db.isTransaction || !('executionPromise' in db)) return undefined;
  const enclosing: Array<Promise<unknown>> = [];
  let outermost: Knex.Transaction = db;
  while (outermost.parentTransaction) {
    enclosing.push(outermost.executionPromise);
    outermost = outermost.parentTransaction;
  }
  if (enclosing.length === 0) return outermost.executionPromise;
  return new Promise((resolve, reject) => {
    for (const settled of enclosing) settled.then(undefined, reject);
    outermost.executionPromise.then(resolve, reject);
  });
}

/** The retry of withTransaction for work that is atomic on its own (a single statement). */
export async function retryingConflicts<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if (!isRetryableTransactionError(err)) throw err;
      if (attempt >= TRANSACTION_ATTEMPTS) throw serviceUnavailable(err);
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20 * attempt));
    }
  }
}

/** `select 1`: is the database reachable and answering? */
export async function pingDatabase(db: Db): Promise<void> {
  await db.raw('select 1');
}

/**
 * Connections in use, idle, and acquisitions waiting, for the pool gauges (undefined before the pool exists): Knex's
 * pool and the statement pool together. Knex has no public API for its pool: this reads `client.pool`, its tarn.js
 * pool, whose counting methods are tarn's public API; pg-pool's counts are its public API.
 * test/integration/prepared-statements.test.ts pins it, so a Knex upgrade that moves the pool fails there.
 */
export function poolStats(db: Db): { inUse: number; idle: number; waiting: number; max: number } | undefined {
  const pool: (Partial<Record<'numUsed' | 'numFree' | 'numPendingAcquires', () => number>> & { max?: number }) | undefined = db.client.pool;
  if (!pool?.numUsed || !pool.numFree || !pool.numPendingAcquires) return undefined;
  const statementPool = statementPools.get(db);
  const statements = statementPool?.current();
  return {
    max: (pool.max ?? 0) + (statementPool?.max ?? 0),
    inUse: pool.numUsed() + (statements ? statements.totalCount - statements.idleCount : 0),
    idle: pool.numFree() + (statements?.idleCount ?? 0),
    waiting: pool.numPendingAcquires() + (statements?.waitingCount ?? 0),
  };
}

/**
 * The generation of each statement name: bumped when PostgreSQL refused a prepared plan after a schema change, so every
 * connection prepares the statement afresh under the next name (the stale one is never used again).
 */
const generations = new Map<string, number>();

/** PostgreSQL's "cached plan must not change result type": a prepared statement outlived a schema change. */
const STALE_PREPARED_STATEMENT = '0A000';

/**
 * Runs `text` (with $1… placeholders) as a named prepared statement on the Db's statement pool (attachStatementPool):
 * PostgreSQL parses and plans it once per connection instead of once per call, and the query builder is skipped.
 * Inside a transaction it runs through Knex as an ordinary parameterised query. For the hottest statements only.
 * test/integration/prepared-statements.test.ts pins it.
 */
export async function preparedRows<R extends object = Record<string, unknown>>(
  db: DbOrTrx,
  name: string,
  text: string,
  values: readonly Knex.Value[],
): Promise<R[]> {
  // A transaction's statements run on its connection; a Db not made by createDb (the bench's PGlite candidate) has no
  // statement pool: both through Knex, as an ordinary parameterised query.
  const pool = db.isTransaction ? undefined : statementPools.get(db)?.open();
  if (!pool) {
    const bindings: Knex.Value[] = [];
    const sql = text.replace(/\$(\d+)/g, (_m, n: string) => {
      bindings.push(values[Number(n) - 1]);
      return '?';
    });
    return (await db.raw<{ rows: R[] }>(sql, bindings)).rows;
  }
  for (let attempt = 1; ; attempt++) {
    const generation = generations.get(name) ?? 0;
    const client = await pool.connect();
    // pg emits 'error' on a checked-out client whose connection fails: without a listener the process would end.
    let lost: Error | undefined;
    const onLost = (err: Error) => {
      lost = err;
    };
    client.on('error', onLost);
    try {
      return (await client.query<R>({ name: generation ? `${name}_g${generation}` : name, text, values: [...values] })).rows;
    } catch (err) {
      // Only a connection's failure ends it; after a statement's own error (a lost race, a value PostgreSQL refused,
      // a stale plan) the connection is kept with the statements it has prepared (pg-pool's `query` would end it).
      if (isConnectionError(err)) lost ??= err instanceof Error ? err : new Error(String(err));
      // Another instance migrated the schema under this prepared statement (a rolling deploy): the statement is
      // prepared afresh under its next name, on this connection and every other, and the call is tried once more.
      if (thrownCode(err) !== STALE_PREPARED_STATEMENT || attempt > 1) throw err;
      if (generations.get(name) === undefined || generations.get(name) === generation) generations.set(name, generation + 1);
    } finally {
      client.off('error', onLost);
      client.release(lost);
    }
  }
}

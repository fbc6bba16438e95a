import { commitOf, type DbOrTrx } from '..';

let generation = 0;
let inFlight = 0;

/**
 * Moves when a write to `oauth_clients` or `api_resources` by this process starts and again when it is committed
 * (services/oauth/client-cache.ts): the instance's client cache forgets what it holds when this moves, without waiting
 * for its own `sso_clients` notification, and keeps no row read while it moved. Every instance, this
 * one included, also hears the notification the tables' triggers send at commit.
 */
export function clientWritesOfThisProcess(): number {
  return generation;
}

/**
 * Whether a write of this process to those tables has started and is not committed or rolled back yet: a row read
 * meanwhile may be the old one even after the commit, so the cache does not keep it.
 */
export function clientWriteInFlight(): boolean {
  return inFlight > 0;
}

/**
 * Runs one write to the tables a cached client is read from, counted as in flight from before the statement until
 * `db`'s work settles (db/index.ts commitOf: for a savepoint, the outermost transaction's commit; at once when `db` is
 * the pool). A write that is committed moves the generation again; one that is rolled back (a failed statement on the
 * pool, a savepoint or transaction rolled back) changed nothing and moves nothing: whatever the cache kept before the
 * write was forgotten when it started, and nothing read while it was in flight was kept.
 */
export async function clientWrite<T>(db: DbOrTrx, write: () => PromiseLike<T>): Promise<T> {
  inFlight++;
  generation++;
  let settled = false;
  const done = (changed: boolean) => {
    if (settled) return;
    settled = true;
    inFlight--;
    if (changed) generation++;
  };
  const afterStatement = (succeeded: boolean) => {
    const commit = commitOf(db);
    if (commit)
      commit.then(
        () => done(true),
        () => done(false),
      );
    else done(succeeded);
  };
  try {
    const result = await write();
    afterStatement(true);
    return result;
  } catch (err) {
    afterStatement(false);
    throw err;
  }
}

import { commitOf, type DbOrTrx } from '..';

let generation = 0;
let inFlight = 0;

/**
 * Moves when a write to `oauth_clients` or `api_resources` by this process starts and again when it is committed (or
 * rolled back) (services/oauth/client-cache.ts): the instance's client cache forgets what it holds when this moves,
 * without waiting for its own `sso_clients` notification, and keeps no row read while it moved. Every instance, this
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
 * `db`'s transaction settles (at once when `db` is the pool: the statement is then committed when it returns).
 */
export async function clientWrite<T>(db: DbOrTrx, write: () => PromiseLike<T>): Promise<T> {
  inFlight++;
  generation++;
  let settled = false;
  const done = () => {
    if (settled) return;
    settled = true;
    inFlight--;
    generation++;
  };
  const afterStatement = () => {
    const commit = commitOf(db);
    if (commit) commit.then(done, done);
    else done();
  };
  try {
    const result = await write();
    afterStatement();
    return result;
  } catch (err) {
    afterStatement();
    throw err;
  }
}

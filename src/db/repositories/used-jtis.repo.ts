import { createHash } from 'node:crypto';
import { preparedRows, type DbOrTrx } from '..';

/**
 * Single-use identifiers (issue 34): a private_key_jwt assertion's `jti` per client, a DPoP proof's `jti` per key.
 * Spending one is one insert on the primary key, so of concurrent uses exactly one is accepted; the row lives until
 * the identifier could no longer be accepted anyway (`expires_at`), then the prune job deletes it.
 */
export type JtiKind = 'client_assertion' | 'dpop_proof';

function keyOf(kind: JtiKind, scope: string, jti: string): string {
  return createHash('sha256').update(`${kind}\u0000${scope}\u0000${jti}`).digest('hex');
}

/** A spend waiting for the batch it goes out with. */
interface PendingSpend {
  key: string;
  expiresAt: Date;
  resolve: (spent: boolean) => void;
  reject: (err: unknown) => void;
}

/** Spends of one pool: while one batch is on its way, the spends that arrive wait and go together in the next. */
interface SpendQueue {
  waiting: PendingSpend[];
  inFlight: number;
}

/** At most this many batches of one pool at once; more spends wait for the next batch. */
const BATCHES_IN_FLIGHT = 2;
const queues = new WeakMap<object, SpendQueue>();

/**
 * True when this use is the first (the identifier is now spent); false when it was spent before.
 *
 * Outside a transaction, spends are batched (issue 34's speed bound: the proof or assertion costs one insert): the first
 * goes at once, and those arriving while `BATCHES_IN_FLIGHT` batches are on their way go together in one statement when
 * one returns. Each key is still one row of the primary key inserted with `on conflict do nothing`, so exactly one use
 * of an identifier is accepted, whether the uses met in one batch (the first in it wins) or in different ones, on this
 * instance or another. A failed batch fails each of its spends (none is taken as spent).
 */
export function spendJti(db: DbOrTrx, kind: JtiKind, scope: string, jti: string, expiresAt: Date): Promise<boolean> {
  const key = keyOf(kind, scope, jti);
  if (db.isTransaction) return insertSpends(db, [{ key, expiresAt }]).then((spent) => spent.has(key));
  let queue = queues.get(db);
  if (!queue) queues.set(db, (queue = { waiting: [], inFlight: 0 }));
  const q = queue;
  return new Promise<boolean>((resolve, reject) => {
    q.waiting.push({ key, expiresAt, resolve, reject });
    if (q.inFlight < BATCHES_IN_FLIGHT) sendBatch(db, q);
  });
}

function sendBatch(db: DbOrTrx, q: SpendQueue): void {
  const batch = q.waiting;
  if (batch.length === 0) return;
  q.waiting = [];
  q.inFlight++;
  insertSpends(db, batch)
    .then(
      (spent) => {
        for (const s of batch) {
          // A key twice in one batch: the first use is the spend, the others were spent before.
          const first = spent.delete(s.key);
          s.resolve(first);
        }
      },
      (err: unknown) => {
        for (const s of batch) s.reject(err);
      },
    )
    .finally(() => {
      q.inFlight--;
      sendBatch(db, q);
    });
}

/** One statement for the batch (a named prepared statement): the keys it inserted, i.e. the ones spent now. */
async function insertSpends(db: DbOrTrx, spends: ReadonlyArray<{ key: string; expiresAt: Date }>): Promise<Set<string>> {
  const rows = await preparedRows<{ key: string }>(
    db,
    'sso_spend_jtis_1',
    `insert into oauth_used_jtis (key, expires_at)
     select * from unnest($1::text[], $2::timestamptz[])
     on conflict (key) do nothing
     returning key`,
    [spends.map((s) => s.key), spends.map((s) => s.expiresAt)],
  );
  return new Set(rows.map((r) => r.key));
}

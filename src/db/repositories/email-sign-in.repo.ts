import type { Knex } from 'knex';
import type { DbOrTrx } from '..';
import { date, num, orNull, rowMapper, same, type RecordOf, type RowOf } from '../rows';
import { live } from '../table';
import { insertForRecipient } from './email-tokens.repo';

export interface EmailSignInRecord {
  id: string;
  user_id: string;
  token_hash: string;
  code_hash: string;
  browser_hash: string | null;
  return_to: string | null;
  failures: number;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

export interface EmailSignInRecipient {
  requestId: string;
  userId: string;
  email: string;
  firstName: string;
}

/**
 * Looks up the address and, when it belongs to an active account with a verified address that asked fewer than
 * `maxPerWindow` times since `windowStart`, burns its open request and stores the new one, all in ONE statement: a
 * known and an unknown address cost the same single round trip. Returns the recipient, or undefined.
 */
export async function insertEmailSignInForAddress(
  db: DbOrTrx,
  r: {
    id: string;
    email: string;
    tokenHash: string;
    codeHash: string;
    browserHash: string | null;
    returnTo: string | null;
    now: Date;
    expiresAt: Date;
    windowStart: Date;
    maxPerWindow: number;
  },
): Promise<EmailSignInRecipient | undefined> {
  const recipient = await insertForRecipient(
    db,
    {
      condition: 'email_verified',
      earlier: 'select count(*) from email_sign_in_requests r where r.user_id = users.id and r.created_at > :windowStart',
    },
    // A data-modifying CTE runs whether or not the query reads it: the open request is burnt before the new one is stored.
    `burnt as (
       update email_sign_in_requests set used_at = :now
        where user_id in (select id from u) and used_at is null
       returning id
     ), ins as (
       insert into email_sign_in_requests (id, user_id, token_hash, code_hash, browser_hash, return_to, created_at, expires_at)
       select :id, u.id, :tokenHash, :codeHash, :browserHash, :returnTo, :now, :expiresAt from u
       returning user_id
     )`,
    {
      email: r.email,
      windowStart: r.windowStart,
      max: r.maxPerWindow,
      now: r.now,
      id: r.id,
      tokenHash: r.tokenHash,
      codeHash: r.codeHash,
      browserHash: r.browserHash,
      returnTo: r.returnTo,
      expiresAt: r.expiresAt,
    },
  );
  return recipient && { requestId: r.id, userId: recipient.id, email: recipient.email, firstName: recipient.firstName };
}

const liveColumns = {
  id: same<string>(),
  userId: same<string>(),
  email: same<string>(),
  codeHash: same<string>(),
  browserHash: orNull<string>(),
  returnTo: orNull<string>(),
  failures: num,
  expiresAt: date,
};

/** The columns LIVE_COLUMNS selects (the request and its account's address). */
export type EmailSignInRow = RowOf<typeof liveColumns>;
const LIVE_COLUMNS = `r.id, r.user_id, u.email, r.code_hash, r.browser_hash, r.return_to, r.failures, r.expires_at`;
type LiveColumns = RecordOf<typeof liveColumns>;
const toRow = rowMapper(liveColumns);

/** The live request (unused, unexpired, fewer than :maxFailures wrong codes) that `which` picks, without consuming it. */
async function findLiveEmailSignIn(
  db: DbOrTrx,
  which: string,
  bindings: { now: Date; maxFailures: number } & Record<string, Knex.Value>,
): Promise<EmailSignInRow | undefined> {
  const result = await db.raw<{ rows: LiveColumns[] }>(
    `select ${LIVE_COLUMNS} from email_sign_in_requests r join users u on u.id = r.user_id
      where ${which} and r.used_at is null and r.expires_at > :now and r.failures < :maxFailures
      order by r.created_at desc limit 1`,
    bindings,
  );
  const [row] = result.rows;
  return row ? toRow(row) : undefined;
}

/** The live request of a link token. */
export const findLiveEmailSignInByToken = (db: DbOrTrx, tokenHash: string, now: Date, maxFailures: number) =>
  findLiveEmailSignIn(db, 'r.token_hash = :tokenHash', { tokenHash, now, maxFailures });

/** The live request of an address (the newest: a new request burns the older ones). */
export const findLiveEmailSignInByEmail = (db: DbOrTrx, email: string, now: Date, maxFailures: number) =>
  findLiveEmailSignIn(db, 'u.email = :email', { email, now, maxFailures });

/** Counts a wrong code atomically; returns the new count (0 when the request is no longer live). */
export async function countEmailSignInFailure(db: DbOrTrx, id: string, now: Date): Promise<number> {
  const rows = await db('email_sign_in_requests')
    .where({ id, used_at: null })
    .modify(live({ now }))
    .increment('failures', 1)
    .returning('failures');
  return rows[0]?.failures ?? 0;
}

/** Burns the request in ONE conditional UPDATE: of N concurrent uses of the link or the code exactly one wins. */
export async function consumeEmailSignIn(db: DbOrTrx, id: string, now: Date, maxFailures: number): Promise<boolean> {
  const rows = await db('email_sign_in_requests')
    .where({ id, used_at: null })
    .modify(live({ now, failuresBelow: maxFailures }))
    .update({ used_at: now })
    .returning('id');
  return rows.length === 1;
}

import type { DbOrTrx } from '..';
import {
  pendingGrantColumns,
  pendingGrantOf,
  type NewPendingGrant,
  type PendingGrant,
  type PendingGrantRecord,
} from './authorization-context';
import { mappedTable } from '../table';

/** An authorization code, known only by its SHA-256 (spec §2.7). */
export interface AuthorizationCodeRow extends PendingGrant {
  codeHash: string;
  usedAt: Date | null;
  sessionId: string | null;
}

export interface AuthorizationCodeRecord extends PendingGrantRecord {
  code_hash: string;
  used_at: Date | null;
  session_id: string | null;
}

function toRow(r: AuthorizationCodeRecord): AuthorizationCodeRow {
  return {
    codeHash: r.code_hash,
    ...pendingGrantOf(r),
    usedAt: r.used_at ? new Date(r.used_at) : null,
    sessionId: r.session_id,
  };
}
const codes = mappedTable('oauth_codes', toRow);

export async function insertAuthorizationCode(db: DbOrTrx, c: NewPendingGrant & { codeHash: string }): Promise<void> {
  await db('oauth_codes').insert({ code_hash: c.codeHash, ...pendingGrantColumns(c) });
}

/**
 * Marks the client's unused, unexpired code used in one conditional UPDATE, so that of N concurrent exchanges
 * exactly one gets the row back. Another client's code is left untouched. `usedAt` is when the code was taken (read
 * from the clock just before this statement), which a later presentation compares with its own arrival.
 */
export async function consumeAuthorizationCode(
  db: DbOrTrx,
  codeHash: string,
  clientId: string,
  now: Date,
  usedAt: Date = now,
): Promise<AuthorizationCodeRow | undefined> {
  // SKIP LOCKED: while one exchange holds the code (its transaction issues the tokens), a concurrent exchange does
  // not queue on the row lock holding a pooled connection; it finds no usable code and is refused at once. A burst of
  // presentations therefore cannot exhaust the pool and turn into 503s. If the holder rolls back, the code stays
  // unused (CONTRACT §3: a failure burns nothing).
  return codes.spend(
    db,
    { code_hash: codeHash, client_id: clientId, used_at: null },
    { used_at: usedAt },
    { now, skipLocked: 'code_hash' },
  );
}

export const findAuthorizationCode = (db: DbOrTrx, codeHash: string) => codes.find(db, { code_hash: codeHash });

/** Remembers the session a code created, so that a replay can revoke it (RFC 6749 §4.1.2). */
export async function setAuthorizationCodeSession(db: DbOrTrx, codeHash: string, sessionId: string): Promise<void> {
  await db('oauth_codes').where({ code_hash: codeHash }).update({ session_id: sessionId });
}

/** Burns every unused code of a client (the client was deactivated). */
export async function burnUnusedCodesOfClient(db: DbOrTrx, clientId: string, now: Date): Promise<number> {
  return db('oauth_codes').where({ client_id: clientId }).whereNull('used_at').update({ used_at: now });
}

/** Burns every unused code of this user for this client (the user disconnected the app). */
export async function burnUnusedCodesOf(db: DbOrTrx, userId: string, clientId: string, now: Date): Promise<number> {
  return db('oauth_codes').where({ user_id: userId, client_id: clientId }).whereNull('used_at').update({ used_at: now });
}

import type { DbOrTrx } from '..';
import {
  pendingGrantColumns,
  pendingGrantOf,
  type NewPendingGrant,
  type PendingGrant,
  type PendingGrantRecord,
} from './authorization-context';

/** A pending authorization: what the user is asked to approve on the consent screen (CONTRACT §5). */
export interface AuthorizationRequestRow extends PendingGrant {
  id: string;
  state: string | null;
  consumedAt: Date | null;
}

export interface AuthorizationRequestRecord extends PendingGrantRecord {
  id: string;
  state: string | null;
  consumed_at: Date | null;
}

function toRow(r: AuthorizationRequestRecord): AuthorizationRequestRow {
  return { id: r.id, ...pendingGrantOf(r), state: r.state, consumedAt: r.consumed_at ? new Date(r.consumed_at) : null };
}

export async function insertAuthorizationRequest(db: DbOrTrx, r: NewPendingGrant & { id: string; state: string | null }): Promise<void> {
  await db('oauth_authorization_requests').insert({ id: r.id, state: r.state, ...pendingGrantColumns(r) });
}

/** The user's pending, unexpired request; undefined for another user's, a consumed or an expired one. */
export async function findPendingAuthorizationRequest(
  db: DbOrTrx,
  id: string,
  userId: string,
  now: Date,
): Promise<AuthorizationRequestRow | undefined> {
  const row = await db('oauth_authorization_requests')
    .where({ id, user_id: userId })
    .whereNull('consumed_at')
    .where('expires_at', '>', now)
    .first();
  return row ? toRow(row) : undefined;
}

/** Consumes the user's pending request in one conditional UPDATE: of concurrent approve/deny exactly one wins. */
export async function consumeAuthorizationRequest(
  db: DbOrTrx,
  id: string,
  userId: string,
  now: Date,
): Promise<AuthorizationRequestRow | undefined> {
  const [row] = await db('oauth_authorization_requests')
    .where({ id, user_id: userId })
    .whereNull('consumed_at')
    .where('expires_at', '>', now)
    .update({ consumed_at: now })
    .returning('*');
  return row ? toRow(row) : undefined;
}

/** Ends every pending authorization request of a client (the client was deactivated): none can be approved later. */
export async function consumePendingRequestsOfClient(db: DbOrTrx, clientId: string, now: Date): Promise<number> {
  return db('oauth_authorization_requests').where({ client_id: clientId }).whereNull('consumed_at').update({ consumed_at: now });
}

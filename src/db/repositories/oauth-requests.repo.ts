import type { DbOrTrx } from '..';
import {
  pendingGrantColumns,
  pendingGrantOf,
  type NewPendingGrant,
  type PendingGrant,
  type PendingGrantRecord,
} from './authorization-context';
import { mappedTable } from '../table';

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
const requests = mappedTable('oauth_authorization_requests', toRow);

export async function insertAuthorizationRequest(db: DbOrTrx, r: NewPendingGrant & { id: string; state: string | null }): Promise<void> {
  await db('oauth_authorization_requests').insert({ id: r.id, state: r.state, ...pendingGrantColumns(r) });
}

/** The user's pending, unexpired request; undefined for another user's, a consumed or an expired one. */
export const findPendingAuthorizationRequest = (db: DbOrTrx, id: string, userId: string, now: Date) =>
  requests.findLive(db, { id, user_id: userId, consumed_at: null }, { now });

/** Consumes the user's pending request in one conditional UPDATE: of concurrent approve/deny exactly one wins. */
export const consumeAuthorizationRequest = (db: DbOrTrx, id: string, userId: string, now: Date) =>
  requests.spend(db, { id, user_id: userId, consumed_at: null }, { consumed_at: now }, { now });

/** Ends every pending authorization request of a client (the client was deactivated): none can be approved later. */
export async function consumePendingRequestsOfClient(db: DbOrTrx, clientId: string, now: Date): Promise<number> {
  return db('oauth_authorization_requests').where({ client_id: clientId }).whereNull('consumed_at').update({ consumed_at: now });
}

import type { DbOrTrx } from '..';
import {
  authorizationContextColumns,
  authorizationContextOf,
  type AuthorizationContext,
  type AuthorizationContextRecord,
  type OidcRequestContext,
} from './authorization-context';

/** A pending authorization: what the user is asked to approve on the consent screen (CONTRACT §5). */
export interface AuthorizationRequestRow extends AuthorizationContext {
  id: string;
  userId: string;
  clientId: string;
  redirectUri: string;
  state: string | null;
  codeChallenge: string;
  createdAt: Date;
  expiresAt: Date;
  consumedAt: Date | null;
}

interface AuthorizationRequestRecord extends AuthorizationContextRecord {
  id: string;
  user_id: string;
  client_id: string;
  redirect_uri: string;
  state: string | null;
  code_challenge: string;
  created_at: Date;
  expires_at: Date;
  consumed_at: Date | null;
}

declare module 'knex/types/tables' {
  interface Tables {
    oauth_authorization_requests: AuthorizationRequestRecord;
  }
}

function toRow(r: AuthorizationRequestRecord): AuthorizationRequestRow {
  return {
    id: r.id,
    userId: r.user_id,
    clientId: r.client_id,
    redirectUri: r.redirect_uri,
    ...authorizationContextOf(r),
    state: r.state,
    codeChallenge: r.code_challenge,
    createdAt: new Date(r.created_at),
    expiresAt: new Date(r.expires_at),
    consumedAt: r.consumed_at ? new Date(r.consumed_at) : null,
  };
}

export async function insertAuthorizationRequest(
  db: DbOrTrx,
  r: {
    id: string;
    userId: string;
    clientId: string;
    redirectUri: string;
    scope: string;
    state: string | null;
    codeChallenge: string;
    now: Date;
    expiresAt: Date;
    oidc?: OidcRequestContext;
    resource?: string | null;
    /** RFC 9449 §10: the DPoP key thumbprint the authorization request named. */
    dpopJkt?: string | null;
  },
): Promise<void> {
  await db('oauth_authorization_requests').insert({
    id: r.id,
    user_id: r.userId,
    client_id: r.clientId,
    redirect_uri: r.redirectUri,
    scope: r.scope,
    state: r.state,
    code_challenge: r.codeChallenge,
    ...authorizationContextColumns(r),
    created_at: r.now,
    expires_at: r.expiresAt,
  });
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

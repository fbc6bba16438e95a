import type { DbOrTrx } from '..';
import { oidcColumns, type OidcRequestContext } from './oauth-codes.repo';

/** A pending authorization: what the user is asked to approve on the consent screen (CONTRACT §5). */
export interface AuthorizationRequestRow {
  id: string;
  userId: string;
  clientId: string;
  redirectUri: string;
  scope: string;
  state: string | null;
  codeChallenge: string;
  /** OIDC: the authorize request's nonce, and when/how the browser session authenticated (for the id_token). */
  nonce: string | null;
  authTime: Date | null;
  amr: string[] | null;
  /** The browser session that approved (issue 34). */
  browserSessionId: string | null;
  /** RFC 8707: the API named at authorize, if any (CONTRACT §12). */
  resource: string | null;
  createdAt: Date;
  expiresAt: Date;
  consumedAt: Date | null;
}

interface AuthorizationRequestRecord {
  id: string;
  user_id: string;
  client_id: string;
  redirect_uri: string;
  scope: string;
  state: string | null;
  code_challenge: string;
  nonce: string | null;
  auth_time: Date | null;
  amr: string[] | null;
  browser_session_id?: string | null;
  resource: string | null;
  created_at: Date;
  expires_at: Date;
  consumed_at: Date | null;
}

function toRow(r: AuthorizationRequestRecord): AuthorizationRequestRow {
  return {
    id: r.id,
    userId: r.user_id,
    clientId: r.client_id,
    redirectUri: r.redirect_uri,
    scope: r.scope,
    state: r.state,
    codeChallenge: r.code_challenge,
    nonce: r.nonce,
    authTime: r.auth_time ? new Date(r.auth_time) : null,
    amr: r.amr,
    browserSessionId: r.browser_session_id ?? null,
    resource: r.resource ?? null,
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
    ...oidcColumns(r.oidc),
    ...(r.resource ? { resource: r.resource } : {}),
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
  const row = await db<AuthorizationRequestRecord>('oauth_authorization_requests')
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
  const [row] = await db<AuthorizationRequestRecord>('oauth_authorization_requests')
    .where({ id, user_id: userId })
    .whereNull('consumed_at')
    .where('expires_at', '>', now)
    .update({ consumed_at: now })
    .returning('*');
  return row ? toRow(row as AuthorizationRequestRecord) : undefined;
}

/** Ends every pending authorization request of a client (the client was deactivated): none can be approved later. */
export async function consumePendingRequestsOfClient(db: DbOrTrx, clientId: string, now: Date): Promise<number> {
  return db('oauth_authorization_requests').where({ client_id: clientId }).whereNull('consumed_at').update({ consumed_at: now });
}

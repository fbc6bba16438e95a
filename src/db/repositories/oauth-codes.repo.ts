import type { DbOrTrx } from '..';
import {
  authorizationContextColumns,
  authorizationContextOf,
  type AuthorizationContext,
  type AuthorizationContextRecord,
  type OidcRequestContext,
} from './authorization-context';

export type { OidcRequestContext } from './authorization-context';

/** An authorization code, known only by its SHA-256 (spec §2.7). */
export interface AuthorizationCodeRow extends AuthorizationContext {
  codeHash: string;
  clientId: string;
  userId: string;
  redirectUri: string;
  codeChallenge: string;
  createdAt: Date;
  expiresAt: Date;
  usedAt: Date | null;
  sessionId: string | null;
}

interface AuthorizationCodeRecord extends AuthorizationContextRecord {
  code_hash: string;
  client_id: string;
  user_id: string;
  redirect_uri: string;
  code_challenge: string;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
  session_id: string | null;
}

declare module 'knex/types/tables' {
  interface Tables {
    oauth_codes: AuthorizationCodeRecord;
  }
}

function toRow(r: AuthorizationCodeRecord): AuthorizationCodeRow {
  return {
    codeHash: r.code_hash,
    clientId: r.client_id,
    userId: r.user_id,
    redirectUri: r.redirect_uri,
    ...authorizationContextOf(r),
    codeChallenge: r.code_challenge,
    createdAt: new Date(r.created_at),
    expiresAt: new Date(r.expires_at),
    usedAt: r.used_at ? new Date(r.used_at) : null,
    sessionId: r.session_id,
  };
}

export async function insertAuthorizationCode(
  db: DbOrTrx,
  c: {
    codeHash: string;
    clientId: string;
    userId: string;
    redirectUri: string;
    scope: string;
    codeChallenge: string;
    now: Date;
    expiresAt: Date;
    oidc?: OidcRequestContext;
    resource?: string | null;
    /** RFC 9449 §10: the DPoP key thumbprint the authorization request named. */
    dpopJkt?: string | null;
  },
): Promise<void> {
  await db('oauth_codes').insert({
    code_hash: c.codeHash,
    client_id: c.clientId,
    user_id: c.userId,
    redirect_uri: c.redirectUri,
    scope: c.scope,
    code_challenge: c.codeChallenge,
    ...authorizationContextColumns(c),
    created_at: c.now,
    expires_at: c.expiresAt,
  });
}

/**
 * Marks the client's unused, unexpired code used in one conditional UPDATE, so that of N concurrent exchanges
 * exactly one gets the row back. Another client's code is left untouched.
 */
export async function consumeAuthorizationCode(
  db: DbOrTrx,
  codeHash: string,
  clientId: string,
  now: Date,
): Promise<AuthorizationCodeRow | undefined> {
  // SKIP LOCKED: while one exchange holds the code (its transaction issues the tokens), a concurrent exchange does
  // not queue on the row lock holding a pooled connection; it finds no usable code and is refused at once. A burst of
  // presentations therefore cannot exhaust the pool and turn into 503s. If the holder rolls back, the code stays
  // unused (CONTRACT §3: a failure burns nothing).
  const [row] = await db('oauth_codes')
    .whereIn(
      'code_hash',
      db('oauth_codes')
        .select('code_hash')
        .where({ code_hash: codeHash, client_id: clientId })
        .whereNull('used_at')
        .where('expires_at', '>', now)
        .forUpdate()
        .skipLocked(),
    )
    .update({ used_at: now })
    .returning('*');
  return row ? toRow(row) : undefined;
}

export async function findAuthorizationCode(db: DbOrTrx, codeHash: string): Promise<AuthorizationCodeRow | undefined> {
  const row = await db('oauth_codes').where({ code_hash: codeHash }).first();
  return row ? toRow(row) : undefined;
}

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

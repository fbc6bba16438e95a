import { preparedRows, type DbOrTrx } from '..';
import { convert, date, dateOrNull, orNull, rowMapper, same, type RecordOf, type RowOf } from '../rows';
import { ACCESS_COLUMNS, rolesCte, sessionClientIsActive, toUserAccess, type AccessColumns, type PrincipalRole } from './principal.repo';
import { sessionContextOf, type AuthorizationContext } from './authorization-context';

const sessionColumns = {
  id: same<string>(),
  userId: same<string>(),
  clientId: same<string | null>(),
  scope: same<string | null>(),
  ip: same<string | null>(),
  userAgent: same<string | null>(),
  createdAt: date,
  lastUsedAt: date,
  expiresAt: date,
  revokedAt: dateOrNull,
  /** When the user last proved who they are (password or passkey); kept through refresh (OIDC `auth_time`). */
  authTime: date,
  /** How they did (OIDC `amr`, CONTRACT §10). */
  amr: convert((amr: string[] | null) => amr ?? ['pwd']),
  /** Back-Channel Logout (issue 34): the browser session a code exchange's session belongs to. */
  browserSessionId: orNull<string>(),
};

export type SessionRow = RowOf<typeof sessionColumns>;
export type SessionRecord = RecordOf<typeof sessionColumns>;
const toSessionRow = rowMapper(sessionColumns);

/** The id_token's `sid` of a session: the browser session it belongs to, else its own id (issue 34). */
export function oidcSidOf(session: Pick<SessionRow, 'id' | 'browserSessionId'>): string {
  return session.browserSessionId ?? session.id;
}

/**
 * A new session and its first refresh token, and the user's active roles and permissions read by the same statement
 * (one round trip for every sign-in and code exchange, issue 10). For a sign-in (`signIn`) the statement also records
 * the user's last_login_at and, with `clearFailuresOf`, clears that address's failed attempts.
 */
export async function insertSession(
  db: DbOrTrx,
  s: {
    id: string;
    userId: string;
    clientId?: string | null;
    scope?: string | null;
    ip?: string | null;
    userAgent?: string | null;
    now: Date;
    expiresAt: Date;
    /** Defaults: now, ['pwd']. A session created by a code exchange inherits the browser session's. */
    authTime?: Date;
    amr?: string[];
    browserSessionId?: string | null;
    /** RFC 8707: the API the grant that opens an OAuth session was for (its refreshes issue tokens for it). */
    resource?: string | null;
  },
  firstRefreshTokenId: string,
  signIn?: { clearFailuresOf?: string },
): Promise<{ roles: PrincipalRole[]; permissions: string[] }> {
  const clearing = signIn?.clearFailuresOf !== undefined;
  // The lock order of docs/security.md, users before login_failures: PostgreSQL runs data-modifying CTEs that nothing
  // reads in no set order (in practice last, in reverse), so `cleared` reads `touched` to run after it.
  const signInCtes = [
    ...(signIn ? ['touched as (update users set last_login_at = $7 where id = $2 returning id)'] : []),
    ...(clearing ? ['cleared as (delete from login_failures where email = $14 and exists (select 1 from touched))'] : []),
  ];
  // A named prepared statement per shape (a password sign-in runs it outside a transaction: issue 10).
  const name = clearing ? 'sso_insert_session_password_sign_in_4' : signIn ? 'sso_insert_session_sign_in_4' : 'sso_insert_session_3';
  const [row] = await preparedRows<AccessColumns>(
    db,
    name,
    `with ${signInCtes.map((cte) => `${cte},`).join('\n')}
     s as (
       insert into sessions (id, user_id, client_id, scope, ip, user_agent, created_at, last_used_at, expires_at, auth_time, amr,
                             browser_session_id, resource)
       values ($1, $2, $3, $4, $5, $6, $7, $7, $8, $9, cast($10 as text[]), cast($12 as uuid), cast($13 as text))
       returning id
     ), t as (
       insert into refresh_tokens (id, session_id, created_at, expires_at) select $11, s.id, $7, $8 from s
     ), ${rolesCte('$2')}
     select ${ACCESS_COLUMNS}`,
    [
      s.id,
      s.userId,
      s.clientId ?? null,
      s.scope ?? null,
      s.ip ?? null,
      s.userAgent ? s.userAgent.slice(0, 512) : null,
      s.now,
      s.expiresAt,
      s.authTime ?? s.now,
      s.amr ?? ['pwd'],
      firstRefreshTokenId,
      s.browserSessionId ?? null,
      s.resource ?? null,
      ...(signIn?.clearFailuresOf !== undefined ? [signIn.clearFailuresOf] : []),
    ],
  );
  return toUserAccess(row);
}

/**
 * RFC 8693 (docs/token-exchange.md): the session of an exchanged token, the calling client's, born under the subject
 * token's session `parentId` (it ends with it: the `session_ended` trigger) and inheriting its browser session and how
 * the user authenticated. No refresh token: an exchange issues an access token only. The parent row is share-locked, so a
 * revocation of it running now either waits for this insert and then ends the child with it, or has committed first
 * and nothing is inserted (a child never outlives an ended parent). Inserted only while the parent is
 * live (its client active); returns the new session's end (never after the parent's), or undefined when it was not.
 */
export async function insertExchangedSession(
  db: DbOrTrx,
  s: {
    id: string;
    parentId: string;
    clientId: string;
    scope: string;
    ip?: string | null;
    userAgent?: string | null;
    now: Date;
    expiresAt: Date;
  },
): Promise<Date | undefined> {
  const result = await db.raw<{ rows: Array<{ expires_at: Date }> }>(
    `insert into sessions (id, user_id, client_id, scope, ip, user_agent, created_at, last_used_at, expires_at, auth_time, amr,
                           browser_session_id, parent_session_id)
     select :id, p.user_id, :clientId, :scope, :ip, :userAgent, :now, :now, least(p.expires_at, :expiresAt), p.auth_time, p.amr,
            p.browser_session_id, p.id
       from sessions p
      where p.id = :parentId and p.revoked_at is null and p.expires_at > :now and ${sessionClientIsActive('p')}
        for share of p
     returning expires_at`,
    {
      id: s.id,
      parentId: s.parentId,
      clientId: s.clientId,
      scope: s.scope,
      ip: s.ip ?? null,
      userAgent: s.userAgent ? s.userAgent.slice(0, 512) : null,
      now: s.now,
      expiresAt: s.expiresAt,
    },
  );
  const [row] = result.rows;
  return row ? new Date(row.expires_at) : undefined;
}

/**
 * OIDC (docs/token-exchange.md): the live session of `clientId` that an id_token's `sid` names (the browser session it
 * belongs to, or in older id_tokens the session itself), the most recent first; its client must be active.
 */
export async function findLiveClientSessionOfSid(
  db: DbOrTrx,
  s: { sid: string; userId: string; clientId: string; now: Date },
): Promise<SessionRow | undefined> {
  const row = await db<SessionRecord>('sessions')
    .where({ user_id: s.userId, client_id: s.clientId })
    .andWhere((q) => q.where({ id: s.sid }).orWhere({ browser_session_id: s.sid }))
    // A session the client got by token exchange is no sign-in of it (nor its grant): only a session of its own counts.
    .whereNull('parent_session_id')
    .whereNull('revoked_at')
    .where('expires_at', '>', s.now)
    .whereRaw(sessionClientIsActive('sessions'))
    .orderBy('created_at', 'desc')
    .first();
  return row ? toSessionRow(row) : undefined;
}

export async function findSessionById(db: DbOrTrx, id: string): Promise<SessionRow | undefined> {
  const row = await db('sessions').where({ id }).first();
  return row ? toSessionRow(row) : undefined;
}

export async function listActiveSessionsOfUser(db: DbOrTrx, userId: string, now: Date): Promise<SessionRow[]> {
  const rows = await db('sessions')
    .where({ user_id: userId })
    .whereNull('revoked_at')
    .where('expires_at', '>', now)
    .orderBy('last_used_at', 'desc');
  return rows.map(toSessionRow);
}

/**
 * Locks a live session row for the rest of the transaction (FOR NO KEY UPDATE: inserts that reference it still
 * proceed). The first lock of every rotation, so that rotations and revocations of one session queue in one order.
 */
export async function lockLiveSession(
  db: DbOrTrx,
  id: string,
  now: Date,
): Promise<
  | {
      id: string;
      userId: string;
      createdAt: Date;
      clientId: string | null;
      scope: string | null;
      context: AuthorizationContext | undefined;
    }
  | undefined
> {
  const row = await db('sessions')
    .where({ id })
    .whereNull('revoked_at')
    .where('expires_at', '>', now)
    .whereRaw(sessionClientIsActive('sessions'))
    .forNoKeyUpdate()
    .first('id', 'user_id', 'created_at', 'client_id', 'scope', 'resource', 'auth_time', 'amr', 'browser_session_id');
  return row
    ? {
        id: row.id,
        userId: row.user_id,
        createdAt: new Date(row.created_at),
        clientId: row.client_id,
        scope: row.scope,
        context: sessionContextOf(row),
      }
    : undefined;
}

export async function touchSession(db: DbOrTrx, id: string, now: Date, patch: { expiresAt?: Date; scope?: string } = {}): Promise<void> {
  const record: Record<string, unknown> = { last_used_at: now };
  if (patch.expiresAt) record.expires_at = patch.expiresAt;
  if (patch.scope !== undefined) record.scope = patch.scope;
  await db('sessions').where({ id }).update(record);
}

/** Revokes one session; returns whether it was active. */
export async function revokeSession(db: DbOrTrx, id: string, now: Date): Promise<boolean> {
  const n = await db('sessions').where({ id }).whereNull('revoked_at').update({ revoked_at: now });
  return n > 0;
}

/** Revokes the user's sessions matching the filter; returns how many were active. */
export async function revokeSessionsOfUser(
  db: DbOrTrx,
  userId: string,
  now: Date,
  filter: { exceptSessionId?: string; clientId?: string } = {},
): Promise<number> {
  const q = db('sessions').where({ user_id: userId }).whereNull('revoked_at');
  if (filter.exceptSessionId) q.whereNot({ id: filter.exceptSessionId });
  if (filter.clientId) q.where({ client_id: filter.clientId });
  return q.update({ revoked_at: now });
}

/**
 * RP-Initiated Logout (issue 34): the client's sessions named by an id_token's `sid`, which names the browser session
 * they belong to (or, in id_tokens signed before back-channel logout, the session itself). Returns how many ended.
 */
export async function revokeClientSessionsOfSid(
  db: DbOrTrx,
  s: { sid: string; userId: string; clientId: string; now: Date },
): Promise<number> {
  return db('sessions')
    .where({ user_id: s.userId, client_id: s.clientId })
    .andWhere((q) => q.where({ id: s.sid }).orWhere({ browser_session_id: s.sid }))
    .whereNull('revoked_at')
    .update({ revoked_at: s.now });
}

export async function revokeSessionsOfClient(db: DbOrTrx, clientId: string, now: Date): Promise<number> {
  return db('sessions').where({ client_id: clientId }).whereNull('revoked_at').update({ revoked_at: now });
}

/** Adds a method to the session's `amr` (a second factor proved while signed in, e.g. at enrolment). */
export async function addSessionAmr(db: DbOrTrx, id: string, method: string): Promise<void> {
  await db.raw(`update sessions set amr = array_append(amr, :method) where id = :id and not (:method = any(amr))`, { id, method });
}

/**
 * A re-authentication inside the session (CONTRACT §11): the user proved `method` just now, so the session's sign-in
 * is recent again (`auth_time`, also the OIDC claim) and its `amr` gains the method.
 */
export async function recordSessionReauthentication(db: DbOrTrx, id: string, method: string, now: Date): Promise<void> {
  await db.raw(
    `update sessions set auth_time = :now,
       amr = case when :method = any(amr) then amr else array_append(amr, :method) end
     where id = :id`,
    { id, method, now },
  );
}

import { preparedRows, retryingConflicts, type DbOrTrx } from '..';
import { lastUseStaleBefore } from '../last-use';
import { sessionContextIsWellFormed } from './authorization-context';
import {
  PRINCIPAL_COLUMNS,
  rolesCte,
  sessionClientIsActive,
  toPrincipalRecord,
  type PrincipalColumns,
  type PrincipalRecord,
} from './principal.repo';

export async function insertRefreshToken(db: DbOrTrx, t: { id: string; sessionId: string; now: Date; expiresAt: Date }): Promise<void> {
  await db('refresh_tokens').insert({ id: t.id, session_id: t.sessionId, created_at: t.now, expires_at: t.expiresAt });
}

/**
 * Marks a live refresh token used, and names its successor, in one conditional statement: of N concurrent
 * presentations exactly one wins. Call it with the session row locked (lockLiveSession), the lock order of every
 * rotation (sessions, then refresh_tokens).
 */
export async function consumeRefreshToken(
  db: DbOrTrx,
  t: { id: string; sessionId: string; now: Date; successorId: string },
): Promise<boolean> {
  const n = await db('refresh_tokens')
    .where({ id: t.id, session_id: t.sessionId })
    .whereNull('used_at')
    .where('expires_at', '>', t.now)
    .update({ used_at: t.now, replaced_by: t.successorId });
  return n === 1;
}

export interface RotatedRefreshToken {
  id: string;
  sessionId: string;
  usedAt: Date | null;
  /** The token that replaced it, while that row still exists. */
  successor: { id: string; usedAt: Date | null; expiresAt: Date } | null;
}

/** A refresh token with the state of its successor: what reuse detection and the grace window decide on. */
export async function findRefreshTokenWithSuccessor(db: DbOrTrx, id: string): Promise<RotatedRefreshToken | undefined> {
  const row = await db('refresh_tokens as rt')
    .leftJoin('refresh_tokens as nx', 'nx.id', 'rt.replaced_by')
    .where('rt.id', id)
    .first('rt.id', 'rt.session_id', 'rt.used_at', 'nx.id as next_id', 'nx.used_at as next_used_at', 'nx.expires_at as next_expires_at');
  if (!row) return undefined;
  return {
    id: row.id,
    sessionId: row.session_id,
    usedAt: row.used_at ? new Date(row.used_at) : null,
    successor: row.next_id
      ? { id: row.next_id, usedAt: row.next_used_at ? new Date(row.next_used_at) : null, expiresAt: new Date(row.next_expires_at) }
      : null,
  };
}

/** What ROTATE_SQL returns: the principal's columns when the rotation was allowed (id null otherwise). */
interface RotationColumns extends PrincipalColumns {
  refresh_expires_at: Date;
  auth_time: Date;
  user_updated_at: Date;
  oidc_sid: string;
}

export interface FastRotation {
  /** Expiry of the successor token. */
  refreshExpiresAt: Date;
  /** The live principal, undefined when the user is no longer active (the token was consumed all the same). */
  principal: PrincipalRecord | undefined;
  /** With the principal: what an id_token of the rotated session says beyond it (read in the same statement). */
  /** What an id_token needs beyond the principal; `sid` is the browser session the session belongs to (issue 34). */
  idTokenReads: { authTime: Date; userUpdatedAt: Date; sid: string } | undefined;
}

/**
 * The common case of a refresh rotation in ONE statement (one round trip, a prepared statement, atomic on its own):
 * lock the live session row (the lock order of every rotation: sessions, then refresh_tokens), consume the live
 * token naming its successor, insert the successor expiring at the earlier of its TTL and the session's absolute end,
 * extend the session (and narrow its scope when asked), and read the principal. Undefined when nothing was consumed
 * (session not live, token already used or expired, or the session's stored context malformed:
 * sessionContextIsWellFormed): the caller then takes the transactional path, which decides between the grace window,
 * reuse detection, the malformed context's refusal and a plain refusal exactly as before.
 */
export async function rotateLiveRefreshToken(
  db: DbOrTrx,
  t: {
    sessionId: string;
    userId: string;
    tokenId: string;
    successorId: string;
    now: Date;
    ttlSeconds: number;
    sessionMaxAgeSeconds: number;
    /** The session's new (narrowed) scope, or null to keep it. */
    scope: string | null;
  },
): Promise<FastRotation | undefined> {
  const [row] = await retryingConflicts(() =>
    preparedRows<RotationColumns>(db, 'sso_rotate_refresh_10', ROTATE_SQL, [
      t.sessionId,
      t.userId,
      t.tokenId,
      t.now,
      t.successorId,
      t.ttlSeconds,
      t.sessionMaxAgeSeconds,
      t.scope,
      lastUseStaleBefore(t.now),
    ]),
  );
  if (!row) return undefined;
  return {
    refreshExpiresAt: new Date(row.refresh_expires_at),
    principal: row.id ? toPrincipalRecord(row) : undefined,
    idTokenReads: row.id
      ? {
          authTime: new Date(row.auth_time),
          userUpdatedAt: new Date(row.user_updated_at),
          sid: String(row.oidc_sid),
        }
      : undefined,
  };
}

/**
 * $1 session, $2 user, $3 presented token id, $4 now, $5 successor id, $6 token TTL s, $7 session max age s, $8 scope,
 * $9 the last use before which the connected app's is stale (db/last-use.ts: written at most once a minute).
 * An OAuth session's client must be active (CONTRACT §8, as in loadPrincipal); its connected app's last use is updated
 * in the same statement (`g`, after refresh_tokens in the lock order of docs/security.md).
 */
export const ROTATE_SQL = `with s as (
       select se.id, se.user_id, se.amr, se.created_at, se.auth_time, se.client_id, se.browser_session_id
         from sessions se
        where se.id = $1 and se.user_id = $2 and se.revoked_at is null and se.expires_at > $4
          and ${sessionClientIsActive('se')} and ${sessionContextIsWellFormed('se')}
        for no key update
     ), c as (
       update refresh_tokens rt set used_at = $4, replaced_by = $5
         from s
        where rt.id = $3 and rt.session_id = s.id and rt.used_at is null and rt.expires_at > $4
       returning rt.id
     ), n as (
       insert into refresh_tokens (id, session_id, created_at, expires_at)
       select $5, s.id, $4, least($4::timestamptz + make_interval(secs => $6), s.created_at + make_interval(secs => $7))
         from s join c on true
       returning expires_at
     ), t as (
       update sessions set last_used_at = $4, expires_at = (select expires_at from n), scope = coalesce($8, sessions.scope)
        where id = $1 and exists (select 1 from n)
     ), g as (
       update oauth_grants og set last_used_at = $4
         from s
        where s.client_id is not null and og.user_id = s.user_id and og.client_id = s.client_id and exists (select 1 from n)
          and (og.last_used_at is null or og.last_used_at < $9)
     ), ${rolesCte('$2')}
     select n.expires_at as refresh_expires_at, s.auth_time, coalesce(s.browser_session_id, s.id) as oidc_sid,
            u.updated_at as user_updated_at, ${PRINCIPAL_COLUMNS}
       from n cross join s left join users u on u.id = s.user_id and u.is_active`;

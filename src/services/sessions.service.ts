import { randomUUID } from 'node:crypto';
import { withTransaction, type DbOrTrx } from '../db';
import { loadPrincipal, type PrincipalRecord } from '../db/repositories/principal.repo';
import {
  consumeRefreshToken,
  findRefreshTokenWithSuccessor,
  insertRefreshToken,
  rotateLiveRefreshToken,
} from '../db/repositories/refresh-tokens.repo';
import { insertSession, lockLiveSession, revokeSession, touchSession } from '../db/repositories/sessions.repo';
import { addSeconds } from '../lib/clock';
import type { RefreshTokenPayload, TokenClaims } from '../lib/jwt';
import type { RequestMeta, ServiceContext } from './context';
import { fullName, globalRoleNames } from './principal';
import type { IdTokenSubject } from './oidc/id-token.service';
import { touchGrantOfSession } from '../db/repositories/oauth-grants.repo';

export interface IssuedTokens {
  sessionId: string;
  accessToken: string;
  refreshToken: string;
  accessExpiresAt: Date;
  refreshExpiresAt: Date;
  /** The live access the tokens were issued with: global role names (the `roles` claim) and permissions. */
  access: { roleNames: string[]; permissions: string[] };
  /** How the user authenticated for this session (the `amr` claim, CONTRACT §10). */
  amr: string[];
  /** RFC 9449: the DPoP key the access token is bound to (`token_type: DPoP`), if any. */
  dpopJkt?: string;
}

interface SessionUser {
  id: string;
  email: string;
  firstName: string;
  lastName: string;
}

function claimsFor(
  user: SessionUser,
  roles: string[],
  sessionId: string,
  amr: string[],
  client?: { clientId: string; scope: string },
): TokenClaims {
  return {
    userId: user.id,
    email: user.email,
    name: fullName(user.firstName, user.lastName),
    roles,
    sid: sessionId,
    amr,
    client_id: client?.clientId,
    scope: client?.scope,
  };
}

/** RFC 9449: the key a grant's tokens are bound to (`cnf.jkt`); the refresh token only when `bindRefresh`. */
export interface DpopBinding {
  jkt: string;
  bindRefresh: boolean;
}

/** The claims with `cnf.jkt` when the token is bound to a DPoP key. */
function bound(claims: TokenClaims, jkt: string | undefined): TokenClaims {
  return jkt ? { ...claims, cnf: { jkt } } : claims;
}

/**
 * THE end of every first-party sign-in: password, second factor (after a password, an upstream provider or an
 * email code), passkey, upstream provider, email link or code. Opens the session (startSession, with `signIn`: the
 * user's last_login_at, and `clearFailuresOf`'s failed attempts cleared) and records `auth.login.succeeded` in the same
 * transaction or right after the one statement. `auth` says when and how the user authenticated when it is not a
 * password alone; the event's detail then names the session's `amr`, and `event` adds what the way of signing in says.
 */
export async function completeSignIn(
  ctx: ServiceContext,
  db: DbOrTrx,
  input: {
    user: SessionUser;
    meta?: RequestMeta;
    auth?: { time: Date; amr: string[] };
    clearFailuresOf?: string;
    event?: { detail?: Record<string, unknown>; ip?: string | null; userAgent?: string | null };
  },
): Promise<IssuedTokens> {
  const { user, meta, auth, clearFailuresOf, event } = input;
  const tokens = await startSession(ctx, db, { user, meta, ...(auth ? { auth } : {}), signIn: clearFailuresOf ? { clearFailuresOf } : {} });
  await ctx.events.record(db, {
    type: 'auth.login.succeeded',
    actorId: user.id,
    subjectId: user.id,
    ...(event?.ip !== undefined ? { ip: event.ip } : {}),
    ...(event?.userAgent !== undefined ? { userAgent: event.userAgent } : {}),
    detail: { session_id: tokens.sessionId, ...(auth ? { amr: tokens.amr } : {}), ...event?.detail },
  });
  return tokens;
}

/** CONTRACT §8: a session never lives past SESSION_MAX_AGE_DAYS after its sign-in, whatever the rotations. */
export function sessionEndOf(ctx: ServiceContext, createdAt: Date): Date {
  return addSeconds(createdAt, ctx.config.sessionMaxAgeDays * 24 * 3600);
}

/** A refresh token lives the earlier of its TTL (30 days) and the session's absolute end (CONTRACT §8). */
function refreshExpiryFor(ctx: ServiceContext, now: Date, sessionCreatedAt: Date): Date {
  const ttlEnd = addSeconds(now, ctx.config.refreshTokenTtlSeconds);
  const sessionEnd = sessionEndOf(ctx, sessionCreatedAt);
  return ttlEnd < sessionEnd ? ttlEnd : sessionEnd;
}

/**
 * Every sign-in (login, register, OAuth code exchange) creates a session; its first refresh token and an access
 * token are issued with it (CONTRACT §3). Runs inside the caller's transaction when given one.
 */
export async function startSession(
  ctx: ServiceContext,
  trx: DbOrTrx,
  input: {
    user: SessionUser;
    /** An OAuth session's client and the context's scope and resource (RFC 8707: the API its refreshes are for). */
    client?: { clientId: string; scope: string; resource?: string | null };
    meta?: RequestMeta;
    /**
     * When and how the user authenticated, if not right now with a password alone: a code exchange inherits the
     * browser session's, a second-factor or passkey sign-in says which methods (CONTRACT §10).
     */
    auth?: { time: Date; amr: string[] };
    /**
     * The session opens a sign-in: the user's last_login_at is recorded in the same statement and, with
     * `clearFailuresOf`, that address's failed attempts are cleared.
     */
    signIn?: { clearFailuresOf?: string };
    /** Back-Channel Logout (issue 34): a code exchange's session belongs to the browser session that approved it. */
    browserSessionId?: string | null;
    /**
     * RFC 9449 (docs/dpop.md): the DPoP key the access token is bound to, and whether the refresh token is bound to it
     * too (a public client's; a confidential client's refresh token is bound by its authentication instead).
     */
    dpop?: DpopBinding;
  },
): Promise<IssuedTokens> {
  const now = ctx.clock.now();
  const sessionId = randomUUID();
  const tokenId = randomUUID();
  const refreshExpiresAt = refreshExpiryFor(ctx, now, now);
  const amr = input.auth?.amr ?? ['pwd'];
  const { roles, permissions } = await insertSession(
    trx,
    {
      id: sessionId,
      userId: input.user.id,
      clientId: input.client?.clientId ?? null,
      scope: input.client?.scope ?? null,
      ip: input.meta?.ip,
      userAgent: input.meta?.userAgent,
      now,
      expiresAt: refreshExpiresAt,
      authTime: input.auth?.time,
      amr,
      browserSessionId: input.browserSessionId ?? null,
      resource: input.client?.resource ?? null,
    },
    tokenId,
    input.signIn,
  );
  const roleNames = globalRoleNames(roles);
  const claims = claimsFor(input.user, roleNames, sessionId, amr, input.client);
  const access = ctx.jwt.signAccess(bound(claims, input.dpop?.jkt), now);
  const refresh = ctx.jwt.signRefresh(bound(claims, input.dpop?.bindRefresh ? input.dpop.jkt : undefined), tokenId, now, refreshExpiresAt);
  return {
    sessionId,
    accessToken: access.token,
    refreshToken: refresh.token,
    accessExpiresAt: access.expiresAt,
    refreshExpiresAt: refresh.expiresAt,
    access: { roleNames, permissions },
    amr,
    dpopJkt: input.dpop?.jkt,
  };
}

export type RotateResult =
  | {
      ok: true;
      tokens: IssuedTokens;
      scope?: string;
      clientId?: string;
      grace: boolean;
      /** The session and user an id_token needs, when the rotation read them (its one-statement path). */
      idTokenSubject?: IdTokenSubject;
    }
  | { ok: false; reason: 'invalid' | 'reused' | 'wrong_client' | 'invalid_scope' };

/** The OAuth client a refresh grant is made by (its current registration), or null for the first-party endpoint. */
export interface RefreshingClient {
  clientId: string;
  scopes: readonly string[];
}

/**
 * CONTRACT §8: a granted scope that is no longer all within the client's registered scopes is narrowed to the
 * intersection; undefined when nothing is left.
 */
export function narrowScope(granted: string | undefined, client: RefreshingClient | null): string | undefined {
  if (!client || granted === undefined) return granted;
  const kept = granted.split(' ').filter((s) => s && client.scopes.includes(s));
  return kept.length > 0 ? kept.join(' ') : undefined;
}

/**
 * Refresh rotation (spec §2.2, CONTRACT §3 and §8), in one transaction that first locks the session row, then
 * consumes the presented token with one conditional UPDATE that names its successor: of N concurrent uses exactly
 * one rotates. The others (and a retried request) find the token used:
 * - within REFRESH_REUSE_GRACE_S of its rotation, while the successor is unused, they get the SAME successor (a
 *   new JWT for its tokenId, expiring with its row) and a fresh access token of the same session;
 * - otherwise it is reuse of a stolen token (RFC 9700 §4.14.2): the whole session is revoked.
 * `client` is the authenticated OAuth client, or null for the first-party endpoint: a token only refreshes where
 * it was issued. A database failure rolls everything back and burns nothing (CONTRACT §3).
 */
export async function rotateRefreshToken(
  ctx: ServiceContext,
  presented: string,
  client: RefreshingClient | null,
  _meta?: RequestMeta,
): Promise<RotateResult> {
  const payload = ctx.jwt.verifyRefresh(presented, ctx.clock.now());
  if (!payload) return { ok: false, reason: 'invalid' };
  return rotateVerifiedRefreshToken(ctx, { payload, scope: narrowScope(payload.scope, client) }, client);
}

/** A refresh token whose signature and lifetime were checked, with its scope narrowed to the client's (narrowScope). */
export interface VerifiedRefresh {
  payload: RefreshTokenPayload;
  scope: string | undefined;
}

/**
 * The rotation of a refresh token verified once by the caller (the OAuth grant checks its key binding, scope and API
 * before rotating: issue 33, one verification and one narrowing per request).
 */
export async function rotateVerifiedRefreshToken(
  ctx: ServiceContext,
  { payload, scope }: VerifiedRefresh,
  client: RefreshingClient | null,
  /** RFC 9449: the key of the refresh request's DPoP proof; the new access token is bound to it (docs/dpop.md). */
  dpopJkt?: string,
): Promise<RotateResult> {
  const now = ctx.clock.now();
  const refuse = (reason: 'invalid' | 'wrong_client' | 'invalid_scope'): RotateResult => ({ ok: false, reason });
  if ((payload.client_id ?? null) !== (client?.clientId ?? null)) return refuse('wrong_client');
  if (payload.scope !== undefined && scope === undefined) return refuse('invalid_scope');

  const issue = (
    principal: PrincipalRecord,
    refreshId: string,
    refreshExpiresAt: Date,
    grace: boolean,
    read?: { authTime: Date; userUpdatedAt: Date; sid: string },
  ): RotateResult => {
    const roles = globalRoleNames(principal.roles);
    const oauth = payload.client_id ? { clientId: payload.client_id, scope: scope ?? '' } : undefined;
    const claims = claimsFor(principal, roles, payload.sid, principal.amr, oauth);
    const access = ctx.jwt.signAccess(bound(claims, dpopJkt), now);
    // A bound refresh token's successor stays bound to the same key (the caller checked the proof's key against it).
    const refresh = ctx.jwt.signRefresh(bound(claims, payload.cnf?.jkt), refreshId, now, refreshExpiresAt);
    return {
      ok: true,
      grace,
      idTokenSubject: read && {
        sessionId: read.sid,
        authTime: read.authTime,
        amr: principal.amr,
        user: { ...principal, updatedAt: read.userUpdatedAt },
      },
      clientId: payload.client_id,
      scope,
      tokens: {
        sessionId: payload.sid,
        accessToken: access.token,
        refreshToken: refresh.token,
        accessExpiresAt: access.expiresAt,
        refreshExpiresAt: refresh.expiresAt,
        access: { roleNames: roles, permissions: principal.permissions },
        amr: principal.amr,
        dpopJkt,
      },
    };
  };

  // The common case in one statement: a live token of a live session, presented for the first time.
  const successorId = randomUUID();
  const fast = await rotateLiveRefreshToken(ctx.db, {
    sessionId: payload.sid,
    userId: payload.userId,
    tokenId: payload.tokenId,
    successorId,
    now,
    ttlSeconds: ctx.config.refreshTokenTtlSeconds,
    sessionMaxAgeSeconds: ctx.config.sessionMaxAgeDays * 24 * 3600,
    scope: scope !== payload.scope ? (scope ?? null) : null,
  });
  const result = fast
    ? fast.principal
      ? issue(fast.principal, successorId, fast.refreshExpiresAt, false, fast.idTokenReads)
      : ({ ok: false, reason: 'invalid' } as const)
    : await withTransaction(ctx.db, async (trx): Promise<RotateResult> => {
        // Nothing was consumed: a token presented again (grace window or reuse), one that is not live, or a session whose
        // stored context is malformed, which this read refuses (invalid_grant, through the one schema) before any spend.
        const session = await lockLiveSession(trx, payload.sid, now);
        if (!session || session.userId !== payload.userId) return { ok: false, reason: 'invalid' };
        const consumed = await consumeRefreshToken(trx, { id: payload.tokenId, sessionId: payload.sid, now, successorId });
        let refreshId: string;
        let refreshExpiresAt: Date;
        if (consumed) {
          refreshId = successorId;
          refreshExpiresAt = refreshExpiryFor(ctx, now, session.createdAt);
          await insertRefreshToken(trx, { id: refreshId, sessionId: payload.sid, now, expiresAt: refreshExpiresAt });
          await touchSession(trx, payload.sid, now, { expiresAt: refreshExpiresAt, scope: scope !== payload.scope ? scope : undefined });
        } else {
          const row = await findRefreshTokenWithSuccessor(trx, payload.tokenId);
          if (!row?.usedAt || row.sessionId !== payload.sid) return { ok: false, reason: 'invalid' };
          const successor = row.successor;
          const graceSeconds = ctx.config.refreshReuseGraceSeconds;
          const graceEnd = addSeconds(row.usedAt, graceSeconds);
          // REFRESH_REUSE_GRACE_S=0 is no window at all: a concurrent presenter that read the clock before the winner
          // did (now < used_at) must not pass as a retry inside a zero-length window.
          if (!successor || successor.usedAt || successor.expiresAt <= now || graceSeconds <= 0 || now >= graceEnd) {
            await revokeSession(trx, payload.sid, now);
            await ctx.events.record(trx, {
              type: 'auth.refresh.reuse_detected',
              actorId: null,
              subjectId: payload.userId,
              clientId: payload.client_id ?? null,
              detail: { session_id: payload.sid },
            });
            return { ok: false, reason: 'reused' };
          }
          refreshId = successor.id;
          refreshExpiresAt = successor.expiresAt;
        }
        const principal = await loadPrincipal(trx, payload.sid, payload.userId, now);
        if (!principal) return { ok: false, reason: 'invalid' };
        // The connected app's last use, as the one-statement path updates it (oauth_grants after refresh_tokens).
        if (payload.client_id) await touchGrantOfSession(trx, payload.sid, now);
        return issue(principal, refreshId, refreshExpiresAt, !consumed);
      });
  const clientOfToken = payload.client_id ?? null;
  if (!result.ok && result.reason === 'reused') {
    ctx.logger.warn({ sessionId: payload.sid, userId: payload.userId }, 'refresh token reuse: session revoked');
  } else if (result.ok) {
    // Counted in the metrics only (NOT_AUDITED): nothing is written, so no transaction to join.
    await ctx.events.record(ctx.db, {
      type: 'oauth.token.issued',
      actorId: payload.userId,
      subjectId: payload.userId,
      clientId: clientOfToken,
      detail: { grant_type: 'refresh_token' },
    });
  }
  return result;
}

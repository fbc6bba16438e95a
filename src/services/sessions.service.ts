import { randomUUID } from 'node:crypto';
import { withTransaction, type DbOrTrx } from '../db';
import { loadPrincipal, loadUserAccess } from '../db/repositories/principal.repo';
import { consumeRefreshToken, findRefreshToken, insertRefreshToken } from '../db/repositories/refresh-tokens.repo';
import { insertSession, revokeSession, touchSession } from '../db/repositories/sessions.repo';
import { addSeconds } from '../lib/clock';
import type { TokenClaims } from '../lib/jwt';
import type { RequestMeta, ServiceContext } from './context';
import { fullName, globalRoleNames } from './principal';

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

/**
 * Every sign-in (login, register, OAuth code exchange) creates a session; its first refresh token and an access
 * token are issued with it (CONTRACT §3). Runs inside the caller's transaction when given one.
 */
export async function startSession(
  ctx: ServiceContext,
  trx: DbOrTrx,
  input: {
    user: SessionUser;
    client?: { clientId: string; scope: string };
    meta?: RequestMeta;
    /**
     * When and how the user authenticated, if not right now with a password alone: a code exchange inherits the
     * browser session's, a second-factor or passkey sign-in says which methods (CONTRACT §10).
     */
    auth?: { time: Date; amr: string[] };
  },
): Promise<IssuedTokens> {
  const now = ctx.clock.now();
  const sessionId = randomUUID();
  const tokenId = randomUUID();
  const refreshExpiresAt = addSeconds(now, ctx.config.refreshTokenTtlSeconds);
  const { roles, permissions } = await loadUserAccess(trx, input.user.id);
  const roleNames = globalRoleNames(roles);
  const amr = input.auth?.amr ?? ['pwd'];
  await insertSession(trx, {
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
  });
  await insertRefreshToken(trx, { id: tokenId, sessionId, now, expiresAt: refreshExpiresAt });
  const claims = claimsFor(input.user, roleNames, sessionId, amr, input.client);
  const access = ctx.jwt.signAccess(claims, now);
  const refresh = ctx.jwt.signRefresh(claims, tokenId, now);
  return {
    sessionId,
    accessToken: access.token,
    refreshToken: refresh.token,
    accessExpiresAt: access.expiresAt,
    refreshExpiresAt: refresh.expiresAt,
    access: { roleNames, permissions },
    amr,
  };
}

export type RotateResult =
  | { ok: true; tokens: IssuedTokens; scope?: string; clientId?: string }
  | { ok: false; reason: 'invalid' | 'reused' | 'wrong_client' };

/**
 * Refresh rotation (spec §2.2, CONTRACT §3): the presented token is consumed with one conditional UPDATE, so of N
 * concurrent uses exactly one wins. A token that was already used revokes its whole session (RFC 9700 §4.14.2).
 * `clientId` is the authenticated OAuth client, or null for the first-party endpoint: a token only refreshes
 * where it was issued. Everything runs in one transaction, so a database failure burns nothing.
 */
export async function rotateRefreshToken(
  ctx: ServiceContext,
  presented: string,
  clientId: string | null,
  meta?: RequestMeta,
): Promise<RotateResult> {
  const now = ctx.clock.now();
  const payload = ctx.jwt.verifyRefresh(presented, now);
  if (!payload) return { ok: false, reason: 'invalid' };
  if ((payload.client_id ?? null) !== clientId) return { ok: false, reason: 'wrong_client' };

  const result = await withTransaction(ctx.db, async (trx): Promise<RotateResult> => {
    const consumed = await consumeRefreshToken(trx, payload.tokenId, payload.sid, now);
    if (!consumed) {
      const row = await findRefreshToken(trx, payload.tokenId);
      if (row?.usedAt && row.sessionId === payload.sid) {
        await revokeSession(trx, payload.sid, now);
        return { ok: false, reason: 'reused' };
      }
      return { ok: false, reason: 'invalid' };
    }
    const principal = await loadPrincipal(trx, payload.sid, payload.userId, now);
    if (!principal) return { ok: false, reason: 'invalid' };
    const tokenId = randomUUID();
    const refreshExpiresAt = addSeconds(now, ctx.config.refreshTokenTtlSeconds);
    await insertRefreshToken(trx, { id: tokenId, sessionId: payload.sid, now, expiresAt: refreshExpiresAt });
    await touchSession(trx, payload.sid, now, refreshExpiresAt);
    const roles = globalRoleNames(principal.roles);
    const client = payload.client_id ? { clientId: payload.client_id, scope: payload.scope ?? '' } : undefined;
    const claims = claimsFor(principal, roles, payload.sid, principal.amr, client);
    const access = ctx.jwt.signAccess(claims, now);
    const refresh = ctx.jwt.signRefresh(claims, tokenId, now);
    return {
      ok: true,
      clientId: payload.client_id,
      scope: payload.scope,
      tokens: {
        sessionId: payload.sid,
        accessToken: access.token,
        refreshToken: refresh.token,
        accessExpiresAt: access.expiresAt,
        refreshExpiresAt: refresh.expiresAt,
        access: { roleNames: roles, permissions: principal.permissions },
        amr: principal.amr,
      },
    };
  });
  const clientOfToken = payload.client_id ?? null;
  if (!result.ok && result.reason === 'reused') {
    ctx.logger.warn({ sessionId: payload.sid, userId: payload.userId }, 'refresh token reuse: session revoked');
    ctx.events.emit({ type: 'auth.refresh.reuse_detected', actorId: null, subjectId: payload.userId, clientId: clientOfToken, detail: { session_id: payload.sid } });
  } else if (result.ok) {
    ctx.events.emit({ type: 'oauth.token.issued', actorId: payload.userId, subjectId: payload.userId, clientId: clientOfToken, detail: { grant_type: 'refresh_token' } });
  }
  return result;
}

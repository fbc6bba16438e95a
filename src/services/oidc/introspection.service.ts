import { findClientById } from '../../db/repositories/oauth-clients.repo';
import { loadPrincipal } from '../../db/repositories/principal.repo';
import { findRefreshTokenWithSuccessor } from '../../db/repositories/refresh-tokens.repo';
import type { AccessTokenPayload, RefreshTokenPayload } from '../../lib/jwt';
import type { ServiceContext } from '../context';
import { verifyResourceToken, type ActClaim } from '../oauth/resource-tokens.service';
import { findApiResourceByIdentifier } from '../../db/repositories/api-resources.repo';
import { findSessionById } from '../../db/repositories/sessions.repo';

export type IntrospectionResponse =
  | { active: false }
  | {
      active: true;
      scope: string | null;
      client_id: string | null;
      sub: string;
      exp: number;
      iat: number;
      token_type: 'Bearer' | 'DPoP' | 'refresh_token';
      sid: string;
      /** RFC 9449 §6.2: the DPoP key the token is bound to. */
      cnf?: { jkt: string };
    }
  | {
      active: true;
      scope: string;
      client_id: string;
      sub: string;
      exp: number;
      iat: number;
      token_type: 'Bearer' | 'DPoP';
      /** RFC 9068 tokens (CONTRACT §12): the API they are for, and sid when a user session stands behind them. */
      aud: string;
      iss: string;
      jti: string;
      sid?: string;
      cnf?: { jkt: string };
      /** RFC 8693 §4.1: the actor of a delegated (exchanged) token, earlier actors nested. */
      act?: ActClaim;
    };

const INACTIVE: IntrospectionResponse = { active: false };

/**
 * RFC 7662 (CONTRACT §9), for a resource server authenticated as any active client. A token is active only while
 * everything that makes it usable holds right now: valid signature and expiry, session not revoked, user and
 * client active, and for a refresh token, not yet rotated. Anything else, garbage included, is `{ active: false }`
 * (RFC 7662 §2.2: no reason is given).
 */
export async function introspectToken(
  ctx: ServiceContext,
  caller: { clientId: string },
  input: { token: string; tokenTypeHint?: string },
): Promise<IntrospectionResponse> {
  const now = ctx.clock.now();
  const asAccess = () => {
    const p = ctx.jwt.verifyAccess(input.token, now);
    return p ? { payload: p as AccessTokenPayload | RefreshTokenPayload, refresh: false } : undefined;
  };
  const asRefresh = () => {
    const p = ctx.jwt.verifyRefresh(input.token, now);
    return p ? { payload: p as AccessTokenPayload | RefreshTokenPayload, refresh: true } : undefined;
  };
  const found = input.tokenTypeHint === 'refresh_token' ? (asRefresh() ?? asAccess()) : (asAccess() ?? asRefresh());
  if (!found) return introspectResourceToken(ctx, input.token);
  const { payload, refresh } = found;

  if (refresh) {
    // CONTRACT §11: a refresh token is described only to the client it was issued to (first-party ones to nobody), so
    // a resource server can never take a refresh token someone presents as a bearer credential for an access token.
    if (payload.client_id !== caller.clientId) return INACTIVE;
    const row = await findRefreshTokenWithSuccessor(ctx.db, (payload as RefreshTokenPayload).tokenId);
    if (!row || row.usedAt || row.sessionId !== payload.sid) return INACTIVE;
  }
  if (!(await loadPrincipal(ctx.db, payload.sid, payload.userId, now))) return INACTIVE;
  if (payload.client_id) {
    const client = await findClientById(ctx.db, payload.client_id);
    if (!client?.isActive) return INACTIVE;
  }
  return {
    active: true,
    scope: payload.client_id ? (payload.scope ?? '') : null,
    client_id: payload.client_id ?? null,
    sub: payload.userId,
    exp: payload.exp,
    iat: payload.iat,
    token_type: refresh ? 'refresh_token' : payload.cnf ? 'DPoP' : 'Bearer',
    sid: payload.sid,
    ...(payload.cnf ? { cnf: { jkt: payload.cnf.jkt } } : {}),
  };
}

/**
 * An RFC 9068 access token (CONTRACT §12): active while its signature, issuer and expiry hold, its client is active, its
 * API is still registered and, when a user session stands behind it, that session is live (not revoked, user active):
 * revoking the session or its refresh token ends the token here at once.
 */
async function introspectResourceToken(ctx: ServiceContext, token: string): Promise<IntrospectionResponse> {
  const claims = await verifyResourceToken(ctx, token);
  if (!claims) return INACTIVE;
  const now = ctx.clock.now();
  const client = await findClientById(ctx.db, claims.client_id);
  if (!client?.isActive) return INACTIVE;
  if (claims.aud !== ctx.config.oidcIssuer && !(await findApiResourceByIdentifier(ctx.db, claims.aud))) return INACTIVE;
  if (claims.sid) {
    const session = await findSessionById(ctx.db, claims.sid);
    if (!session || session.clientId !== claims.client_id) return INACTIVE;
    if (!(await loadPrincipal(ctx.db, claims.sid, claims.sub, now))) return INACTIVE;
  } else if (claims.sub !== claims.client_id) {
    return INACTIVE;
  }
  return {
    active: true,
    scope: claims.scope ?? '',
    client_id: claims.client_id,
    sub: claims.sub,
    exp: claims.exp,
    iat: claims.iat,
    token_type: claims.cnf ? 'DPoP' : 'Bearer',
    aud: claims.aud,
    iss: claims.iss,
    jti: claims.jti,
    ...(claims.sid ? { sid: claims.sid } : {}),
    ...(claims.cnf ? { cnf: { jkt: claims.cnf.jkt } } : {}),
    ...(claims.act ? { act: claims.act } : {}),
  };
}

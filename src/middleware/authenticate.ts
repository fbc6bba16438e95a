import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { loadPrincipal } from '../db/repositories/principal.repo';
import { forbidden, unauthorized } from '../errors';
import type { ServiceContext } from '../services/context';
import { presentedTokenOf, type PresentedToken } from '../lib/presented-token';
import { judgeTokenPresentation } from '../services/oauth/dpop-resource';
import { toPrincipal, type Principal } from '../services/principal';
import { rotateRefreshToken } from '../services/sessions.service';
import { contextOf } from './request-context';
import { ACCESS_COOKIE, REFRESH_COOKIE, setSessionCookies } from './session-cookies';

export interface AuthenticateOptions {
  /** Let the request through without a principal instead of answering 401. */
  optional?: boolean;
  /**
   * Browser entry points (OAuth authorize, built-in pages): when the accessToken cookie has expired but the
   * refreshToken cookie is valid, rotate it and carry on signed in (CONTRACT §3).
   */
  refreshFromCookie?: boolean;
  /**
   * Accept access tokens issued to OAuth clients. Off by default: a third-party app holding a user's token may
   * read who the user is (GET /api/auth/me, userinfo) and sign out, but never act as the user's first-party
   * session: no self-service, no admin API, no consent approval (which would let it grant itself scopes).
   */
  allowClientTokens?: boolean;
}

/** The token of an `Authorization: Bearer <token>` header (RFC 6750 §2.1). */
export function bearerTokenOf(req: Pick<IncomingMessage, 'headers'>): string | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/** Verifies the access JWT, then checks session, user and live permissions in one database round trip. */
export async function resolvePrincipal(ctx: ServiceContext, token: string): Promise<Principal | undefined> {
  const now = ctx.clock.now();
  const payload = ctx.jwt.verifyAccess(token, now);
  if (!payload) return undefined;
  const record = await loadPrincipal(ctx.db, payload.sid, payload.userId, now);
  return record ? toPrincipal(record, payload) : undefined;
}

/**
 * RFC 9449 §7 (docs/dpop.md): a DPoP-bound token only as `Authorization: DPoP` with a proof of its key, an unbound one
 * only as Bearer; undefined when the token may be used, else the 401's challenge.
 */
export function presentationChallenge(ctx: ServiceContext, req: Request, presented: PresentedToken, principal: Principal) {
  return judgeTokenPresentation(ctx, presented, principal.dpopJkt, {
    method: req.method,
    url: `${ctx.config.baseUrl}${req.originalUrl}`,
    dpop: req.headers.dpop,
  });
}

export function createAuthenticate(ctx: ServiceContext) {
  return function authenticate(options: AuthenticateOptions = {}): RequestHandler {
    return async (req: Request, res: Response, next: NextFunction) => {
      const presented = presentedTokenOf(req.headers.authorization);
      const bearer = presented?.token;
      // The cookie only when the Authorization header carries no Bearer or DPoP token: such a request never parses its
      // Cookie header (another scheme, or a malformed header, falls back to the cookie as before).
      const cookieToken: unknown = bearer === undefined ? req.cookies?.[ACCESS_COOKIE] : undefined;
      const token = bearer ?? (typeof cookieToken === 'string' ? cookieToken : undefined);
      let principal = token ? await resolvePrincipal(ctx, token) : undefined;
      // RFC 9449 §7: a bound token is judged however it came; in the accessToken cookie it is a Bearer presentation.
      const shown: PresentedToken | undefined = presented ?? (token ? { scheme: 'bearer', token } : undefined);
      if (principal && shown && (principal.dpopJkt || shown.scheme === 'dpop')) {
        const refused = await presentationChallenge(contextOf(ctx, req), req, shown, principal);
        if (refused) {
          if (!options.optional) throw unauthorized(refused.description, refused.headers);
          principal = undefined;
        }
      }
      if (principal?.clientId && !options.allowClientTokens) {
        if (!options.optional) throw forbidden('This endpoint does not accept tokens issued to OAuth clients');
        principal = undefined;
      }
      if (principal) req.authMethod = bearer ? 'bearer' : 'cookie';

      if (!principal && !bearer && options.refreshFromCookie) {
        const refreshCookie: unknown = req.cookies?.[REFRESH_COOKIE];
        if (typeof refreshCookie === 'string') {
          const rotated = await rotateRefreshToken(contextOf(ctx, req), refreshCookie, null, {
            ip: req.ip,
            userAgent: req.get('user-agent'),
          });
          if (rotated.ok) {
            setSessionCookies(res, ctx.config, rotated.tokens);
            principal = await resolvePrincipal(ctx, rotated.tokens.accessToken);
            if (principal) req.authMethod = 'cookie';
          }
        }
      }

      if (!principal) {
        if (options.optional) return next();
        throw unauthorized(token ? 'Invalid or expired access token' : 'Authentication required');
      }
      req.principal = principal;
      next();
    };
  };
}

export type Authenticate = ReturnType<typeof createAuthenticate>;

/** The principal of a route behind `authenticate()`. */
export function principalOf(req: Request): Principal {
  if (!req.principal) throw unauthorized();
  return req.principal;
}

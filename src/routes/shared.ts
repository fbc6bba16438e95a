import type { Request, Response } from 'express';
import type { Config } from '../config';
import { rotateCsrf } from '../middleware/csrf';
import { setSessionCookies } from '../middleware/session-cookies';
import type { AuthResult } from '../services/auth.service';
import type { RequestMeta } from '../services/context';
import { presentAuthUser } from './auth/auth.presenters';

/**
 * What several routers share (the API's and the pages'), defined once here rather than imported from one router into
 * another.
 */

/** Who made the request, as sessions and security events record it. */
export function requestMeta(req: Request): RequestMeta {
  return { ip: req.ip ?? null, userAgent: req.get('user-agent') ?? null };
}

/** Every successful sign-in (register, login, its second step, passkey): the SSO cookies and the `authResult` body. */
export function signedIn(config: Config, res: Response, result: AuthResult) {
  setSessionCookies(res, config, result.tokens);
  rotateCsrf(res, config);
  return {
    user: presentAuthUser(result.user, result.tokens.access),
    accessToken: result.tokens.accessToken,
    refreshToken: result.tokens.refreshToken,
  };
}

/** The query string of the request as sent, with its leading `?` (empty when there is none). */
export function rawQueryOf(req: Request): string {
  const i = req.originalUrl.indexOf('?');
  return i < 0 ? '' : req.originalUrl.slice(i);
}

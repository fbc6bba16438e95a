import type { Request, Response } from 'express';
import type { Config } from '../config';
import { rotateCsrf } from '../middleware/csrf';
import { setSessionCookies } from '../middleware/session-cookies';
import type { AuthResult, SecondFactorRequired } from '../services/auth.service';
import type { RequestMeta } from '../services/context';
import { presentAuthUser } from './auth/auth.presenters';
import { reply } from './route';

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

/**
 * A first factor accepted (the password, an emailed code): signed in, or (CONTRACT §10) a 401 mfa_required with the
 * token of the second step, and no cookie and no session until that step.
 */
export function signedInOrSecondStep(config: Config, res: Response, result: AuthResult | SecondFactorRequired) {
  if (result.mfaRequired) {
    return reply(401, {
      error: 'mfa_required',
      message: 'A second factor is required to finish signing in',
      mfa_token: result.mfaToken,
      methods: result.methods,
    });
  }
  return signedIn(config, res, result);
}

/** The query string of the request as sent, with its leading `?` (empty when there is none). */
export function rawQueryOf(req: Request): string {
  const i = req.originalUrl.indexOf('?');
  return i < 0 ? '' : req.originalUrl.slice(i);
}

import type { Request } from 'express';
import type { Config } from '../config';
import type { Clock } from '../lib/clock';
import type { CookieWrite } from '../http/outcome';
import { rotatedCsrf } from '../middleware/csrf';
import { sessionCookies } from '../middleware/session-cookies';
import type { AuthResult, SecondFactorRequired } from '../services/auth.service';
import type { RequestMeta } from '../services/context';
import { presentAuthUser } from './auth/auth.presenters';
import { reply, replyOf } from './route';

/**
 * What several routers share (the API's and the pages'), defined once here rather than imported from one router into
 * another.
 */

/** Who made the request, as sessions and security events record it. */
export function requestMeta(req: Request): RequestMeta {
  return { ip: req.ip ?? null, userAgent: req.get('user-agent') ?? null };
}

/** When the request reached the server, in `clock`'s time (the global step's mark; now where none marked it). */
export function arrivalOf(clock: Clock, req: Request): Date {
  const now = clock.now();
  return req.arrivedAt === undefined ? now : new Date(now.getTime() - (performance.now() - req.arrivedAt));
}

/**
 * The cookies of every sign-in, the API's and the pages' alike: the SSO pair and a new CSRF value (session fixation's
 * CSRF twin). The one place that decides them.
 */
export const signedInCookies = (config: Config, result: Pick<AuthResult, 'tokens'>): CookieWrite[] => [
  ...sessionCookies(config, result.tokens),
  rotatedCsrf(config),
];

/** Every successful sign-in of the API (register, login, its second step, passkey): the `authResult` body with the sign-in cookies. */
export function signedIn(config: Config, result: AuthResult) {
  return replyOf({
    user: presentAuthUser(result.user, result.tokens.access),
    accessToken: result.tokens.accessToken,
    refreshToken: result.tokens.refreshToken,
  }).withCookies(...signedInCookies(config, result));
}

/**
 * A first factor accepted (the password, an emailed code): signed in, or (CONTRACT §10) a 401 mfa_required with the
 * token of the second step, and no cookie and no session until that step.
 */
export function signedInOrSecondStep(config: Config, result: AuthResult | SecondFactorRequired) {
  if (result.mfaRequired) {
    return reply(401, {
      error: 'mfa_required',
      message: 'A second factor is required to finish signing in',
      mfa_token: result.mfaToken,
      methods: result.methods,
    });
  }
  return signedIn(config, result);
}

/** The query string of the request as sent, with its leading `?` (empty when there is none). */
export function rawQueryOf(req: Request): string {
  const i = req.originalUrl.indexOf('?');
  return i < 0 ? '' : req.originalUrl.slice(i);
}

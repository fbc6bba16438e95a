import type { RequestHandler } from 'express';
import type { Config } from '../config';
import type { LiveSettings } from '../services/settings/live-settings';
import { forbidden } from '../errors';
import { fieldOf } from '../lib/thrown';
import { ACCESS_COOKIE, REFRESH_COOKIE } from './session-cookies';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * CSRF defence for cookie sessions (CONTRACT §3): a state-changing request that carries the SSO cookies (and no
 * Bearer header) with an Origin that is neither BASE_URL's nor allow-listed is refused. Requests without Origin
 * (non-browser clients) pass; SameSite=Lax keeps the cookies off cross-site subrequests in any case.
 */
export function originCheck(config: Pick<Config, 'baseOrigin'>, settings: LiveSettings): RequestHandler {
  return (req, _res, next) => {
    if (SAFE_METHODS.has(req.method)) return next();
    const origin = req.headers.origin;
    if (!origin) return next();
    if (req.headers.authorization?.toLowerCase().startsWith('bearer ')) return next();
    if (!fieldOf(req.cookies, ACCESS_COOKIE) && !fieldOf(req.cookies, REFRESH_COOKIE)) return next();
    if (origin === config.baseOrigin || settings.current.allowedOrigins.has(origin)) return next();
    next(forbidden('Cross-site request refused'));
  };
}

/**
 * Login CSRF: register, login and refresh-token set the SSO cookies without needing any, so `originCheck` never sees
 * them, and a cross-site form post (form-urlencoded needs no CORS preflight) could sign the victim's browser into the
 * attacker's account. A present Origin must be ours or allow-listed; clients that send none (CLI, servers, mobile)
 * are unaffected.
 */
export function requireAllowedOrigin(config: Pick<Config, 'baseOrigin'>, settings: LiveSettings): RequestHandler {
  return (req, _res, next) => {
    const origin = req.headers.origin;
    if (origin === undefined || origin === config.baseOrigin || settings.current.allowedOrigins.has(origin)) return next();
    next(forbidden('Cross-site sign-in refused'));
  };
}

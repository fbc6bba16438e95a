import type { CookieOptions, Request, Response } from 'express';
import type { Config } from '../config';
import type { CookieWrite } from '../http/outcome';
import { randomToken, safeEqual } from '../lib/crypto';
import { fieldOf } from '../lib/thrown';

/**
 * CSRF defence of the built-in HTML forms (CONTRACT §5), double-submit: a random value in an HttpOnly
 * SameSite=Strict cookie, echoed in a hidden `csrf` field and compared in constant time. Another site can neither
 * read the cookie nor make the browser send it with a cross-site post. The value is reused while the cookie
 * lives, so two open tabs both work.
 */
export const CSRF_COOKIE = 'csrf';
const CSRF_SHAPE = /^[A-Za-z0-9_-]{43}$/;
const CSRF_MAX_AGE_MS = 3600 * 1000;

/** Sets (or renews) the cookie and returns the value to put in the form's hidden `csrf` field. */
export function issueCsrf(req: Request, res: Response, config: Pick<Config, 'cookieSecure'>): string {
  const existing: unknown = req.cookies?.[CSRF_COOKIE];
  const value = typeof existing === 'string' && CSRF_SHAPE.test(existing) ? existing : randomToken(32);
  res.cookie(CSRF_COOKIE, value, csrfOptions(config));
  return value;
}

/**
 * A new CSRF value at sign-in, as an answer's cookie (every sign-in that sets the SSO cookies: pages, their second step,
 * passkeys, an identity provider's callback, sign-up, and the API's): a value planted or read before the sign-in never
 * works after it (session fixation's CSRF twin). Forms rendered before it then need a reload, as after any sign-in.
 * `value` is the new value (a page rendered with it uses it, not the old one).
 */
export function rotatedCsrf(config: Pick<Config, 'cookieSecure'>): CookieWrite & { value: string } {
  return { name: CSRF_COOKIE, value: randomToken(32), options: csrfOptions(config) };
}

const csrfOptions = (config: Pick<Config, 'cookieSecure'>): CookieOptions => ({
  httpOnly: true,
  sameSite: 'strict',
  secure: config.cookieSecure,
  path: '/',
  maxAge: CSRF_MAX_AGE_MS,
});

/**
 * True when the posted `csrf` field matches the cookie AND the post comes from our own pages. The pair alone proves
 * nothing against a sibling subdomain, which can plant the cookie on the parent domain (OWASP CSRF cheat sheet,
 * "naive double-submit"); browsers send Origin on every form post, ours from BASE_URL. A post without Origin
 * (no browser) still needs the pair.
 */
export function csrfValid(req: Request, config: Pick<Config, 'baseOrigin'>): boolean {
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== config.baseOrigin) return false;
  const cookie: unknown = req.cookies?.[CSRF_COOKIE];
  const field = fieldOf(req.body, 'csrf');
  return typeof cookie === 'string' && typeof field === 'string' && CSRF_SHAPE.test(cookie) && safeEqual(cookie, field);
}

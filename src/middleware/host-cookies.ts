import type { CookieOptions } from 'express';
import type { Config } from '../config';

/**
 * Cookies that bind a flow to one browser (docs/security.md, "Cookies a sibling cannot plant"). Any subdomain of the
 * same site can set a cookie for the parent domain ("cookie tossing"), and the browser sends it to this host too, so a
 * plain cookie proves nothing about who set it. Browsers accept a `__Host-` cookie only when it is Secure, has
 * Path=/ and no Domain, and only from this very host: a sibling can neither plant nor overwrite it. That needs
 * COOKIE_SECURE; without it (plain http in development) there is no binding cookie, and the flows that rely on one
 * treat every browser as "another browser".
 */
export function hostCookieName(config: Pick<Config, 'cookieSecure'>, name: string): string | undefined {
  return config.cookieSecure ? `__Host-${name}` : undefined;
}

/** The attributes a `__Host-` cookie must carry (browsers refuse it otherwise). */
export function hostCookieOptions(maxAgeMs: number, sameSite: 'lax' | 'strict' = 'lax'): CookieOptions {
  return { httpOnly: true, secure: true, sameSite, path: '/', maxAge: maxAgeMs };
}

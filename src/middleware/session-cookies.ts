import type { CookieOptions, Response } from 'express';
import type { Config } from '../config';
import { clearCookie, setCookie, type CookieWrite } from '../http/outcome';

export const ACCESS_COOKIE = 'accessToken';
export const REFRESH_COOKIE = 'refreshToken';

function baseOptions(config: Pick<Config, 'cookieSecure' | 'cookieDomain'>): CookieOptions {
  return { httpOnly: true, sameSite: 'lax', secure: config.cookieSecure, path: '/', domain: config.cookieDomain };
}

/** CONTRACT §3: accessToken Max-Age 3600, refreshToken Max-Age 604800, HttpOnly, SameSite=Lax, Path=/. */
export function setSessionCookies(
  res: Response,
  config: Pick<Config, 'cookieSecure' | 'cookieDomain' | 'accessCookieMaxAgeSeconds' | 'refreshCookieMaxAgeSeconds'>,
  tokens: { accessToken: string; refreshToken: string },
): void {
  for (const c of sessionCookies(config, tokens)) res.cookie(c.name, c.value, c.options);
}

/** The session pair of setSessionCookies as an outcome's cookies (src/http/outcome.ts). */
export function sessionCookies(
  config: Pick<Config, 'cookieSecure' | 'cookieDomain' | 'accessCookieMaxAgeSeconds' | 'refreshCookieMaxAgeSeconds'>,
  tokens: { accessToken: string; refreshToken: string },
): CookieWrite[] {
  return [
    setCookie(ACCESS_COOKIE, tokens.accessToken, { ...baseOptions(config), maxAge: config.accessCookieMaxAgeSeconds * 1000 }),
    setCookie(REFRESH_COOKIE, tokens.refreshToken, { ...baseOptions(config), maxAge: config.refreshCookieMaxAgeSeconds * 1000 }),
  ];
}

export function clearSessionCookies(res: Response, config: Pick<Config, 'cookieSecure' | 'cookieDomain'>): void {
  for (const c of clearedSessionCookies(config)) res.clearCookie(c.name, c.options);
}

/** Both session cookies cleared, as an outcome's cookies. */
export function clearedSessionCookies(config: Pick<Config, 'cookieSecure' | 'cookieDomain'>): CookieWrite[] {
  return [clearCookie(ACCESS_COOKIE, baseOptions(config)), clearCookie(REFRESH_COOKIE, baseOptions(config))];
}

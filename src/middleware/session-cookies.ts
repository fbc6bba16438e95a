import type { CookieOptions, Response } from 'express';
import type { Config } from '../config';

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
  res.cookie(ACCESS_COOKIE, tokens.accessToken, { ...baseOptions(config), maxAge: config.accessCookieMaxAgeSeconds * 1000 });
  res.cookie(REFRESH_COOKIE, tokens.refreshToken, { ...baseOptions(config), maxAge: config.refreshCookieMaxAgeSeconds * 1000 });
}

export function clearSessionCookies(res: Response, config: Pick<Config, 'cookieSecure' | 'cookieDomain'>): void {
  res.clearCookie(ACCESS_COOKIE, baseOptions(config));
  res.clearCookie(REFRESH_COOKIE, baseOptions(config));
}

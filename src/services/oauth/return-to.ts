import type { Config } from '../../config';

/**
 * This server's own pages a sign-in may return to: the authorize endpoint, the consent screen, the account page, /device,
 * and the SAML sign-in (CONTRACT §19: a pending AuthnRequest, or an IdP-initiated start).
 */
const OWN_RETURN_PATHS = new Set(['/api/oauth/authorize', '/consent', '/account', '/device', '/saml/continue', '/saml/sso']);

/** ...and any page of the administration console (CONTRACT §14: not signed in -> /login?return_to=). */
const isConsolePath = (pathname: string) => pathname === '/admin' || pathname.startsWith('/admin/');

/**
 * The post-login destination, or undefined when it is not allowed (open redirect defence, CONTRACT §4/§5):
 * same origin as BASE_URL on one of OWN_RETURN_PATHS, or any URL on an allow-listed LOGIN_APPS origin.
 * The value is resolved against BASE_URL and the resolved href is returned, so "//evil.test" or "/\evil.test"
 * cannot slip through as relative paths.
 */
export function resolveReturnTo(
  config: Pick<Config, 'baseUrl' | 'baseOrigin' | 'loginApps'>,
  returnTo: string | undefined,
): string | undefined {
  if (!returnTo || returnTo.length > 4096) return undefined;
  // CONTRACT §8: like login-target, a protocol-relative `//host` or `/\host` is refused outright, even when it
  // would resolve to an allow-listed origin.
  if (/^[/\\]{2}/.test(returnTo.trim())) return undefined;
  let url: URL;
  try {
    url = new URL(returnTo, `${config.baseUrl}/`);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username || url.password) return undefined;
  if (url.pathname.startsWith('//')) return undefined;
  if (url.origin === config.baseOrigin && (OWN_RETURN_PATHS.has(url.pathname) || isConsolePath(url.pathname))) return url.href;
  if (Object.values(config.loginApps).includes(url.origin)) return url.href;
  return undefined;
}

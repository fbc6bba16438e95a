/** Longest redirect URI accepted at client registration. */
export const REDIRECT_URI_MAX_LENGTH = 2048;

/** Loopback hosts that may use plain http (RFC 8252 §7.3: native apps listen on the loopback interface). */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * A refusal's `reason` is the English sentence of `said.key`, a key of the catalogues' `validation` section (src/i18n,
 * which lib/ may not import; test/unit/outbound-words.test.ts holds the two together).
 */
export type RedirectUriCheck =
  { ok: true } | { ok: false; reason: string; said: { key: RedirectUriRefusal; params?: Readonly<Record<string, string>> } };

export type RedirectUriRefusal =
  | 'redirectUriEmpty'
  | 'redirectUriTooLong'
  | 'redirectUriCharacters'
  | 'redirectUriWildcard'
  | 'redirectUriFragment'
  | 'redirectUriAbsolute'
  | 'redirectUriPrivateUseForm'
  | 'redirectUriScheme'
  | 'redirectUriHost'
  | 'redirectUriUserinfo'
  | 'redirectUriInvalid'
  | 'redirectUriHttps';

const refused = (key: RedirectUriRefusal, reason: string, params?: Record<string, string>): RedirectUriCheck => ({
  ok: false,
  reason,
  said: params ? { key, params } : { key },
});

/**
 * Rules for a redirect URI registered on an OAuth client. The URI is stored exactly as given, because authorize
 * compares it by exact string match (RFC 6749 §3.1.2, RFC 9700 §4.1.3), so anything ambiguous is refused here:
 * - absolute http(s) URL (no javascript:, data:, custom schemes, relative references);
 * - https, except http on the loopback hosts localhost, 127.0.0.1 and [::1], any port (RFC 6749 §3.1.2.1, RFC 8252
 *   §7.3), or anywhere when `allowHttp` (ALLOW_HTTP_REDIRECT_URIS, internal plain-http deployments, CONTRACT §8);
 * - no fragment (RFC 6749 §3.1.2);
 * - no userinfo and no `@` in the authority (`https://good.example@evil.example/` misleads the reader);
 * - no wildcard `*`, no backslash, whitespace or control characters (parsers disagree about them).
 */
export function checkRedirectUri(uri: string, options: { allowHttp?: boolean; allowPrivateUse?: boolean } = {}): RedirectUriCheck {
  if (uri.length === 0) return refused('redirectUriEmpty', 'redirect URI is empty');
  if (uri.length > REDIRECT_URI_MAX_LENGTH) {
    return refused('redirectUriTooLong', `redirect URI is longer than ${REDIRECT_URI_MAX_LENGTH} characters`, {
      max: String(REDIRECT_URI_MAX_LENGTH),
    });
  }
  if (/[\s\x00-\x1f\x7f\\]/.test(uri)) {
    return refused('redirectUriCharacters', 'redirect URI must not contain whitespace, control characters or backslashes');
  }
  if (uri.includes('*')) return refused('redirectUriWildcard', 'redirect URI must not contain wildcards');
  if (uri.includes('#')) return refused('redirectUriFragment', 'redirect URI must not contain a fragment');

  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(uri)?.[1]?.toLowerCase();
  if (!scheme) return refused('redirectUriAbsolute', 'redirect URI must be an absolute URL');
  if (options.allowPrivateUse && scheme !== 'https' && scheme !== 'http' && scheme.includes('.')) {
    return isPrivateUseRedirectUri(uri)
      ? { ok: true }
      : refused('redirectUriPrivateUseForm', 'a private-use scheme redirect URI has the form com.example.app:/path (RFC 8252 §7.1)');
  }
  if (scheme !== 'https' && scheme !== 'http') {
    return refused('redirectUriScheme', 'redirect URI must use https (or http on localhost / 127.0.0.1 / [::1])');
  }
  if (!/^https?:\/\/[^/?]/i.test(uri)) return refused('redirectUriHost', 'redirect URI must be an absolute URL with a host');

  const authority = /^https?:\/\/([^/?]*)/i.exec(uri)?.[1] ?? '';
  if (authority.includes('@')) return refused('redirectUriUserinfo', 'redirect URI must not contain user information');

  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return refused('redirectUriInvalid', 'redirect URI is not a valid URL');
  }
  if (!url.hostname) return refused('redirectUriHost', 'redirect URI must be an absolute URL with a host');
  if (url.protocol === 'http:' && !options.allowHttp && !LOOPBACK_HOSTS.has(url.hostname)) {
    return refused('redirectUriHttps', 'redirect URI must use https (http is allowed only on localhost, 127.0.0.1 and [::1])');
  }
  return { ok: true };
}

/**
 * RFC 8252 §7.1: a native app's private-use URI scheme in reverse-domain form (a dot in the scheme), one slash after
 * the colon, then a path: `com.example.app:/oauth/callback`. Schemes a browser treats specially never pass.
 */
export function isPrivateUseRedirectUri(uri: string): boolean {
  const match = /^([a-z][a-z0-9+-]*(?:\.[a-z0-9+-]+)+):\/([A-Za-z0-9._~!$&'()+,;=:@%/-]*)$/.exec(uri);
  if (!match) return false;
  const path = match[2];
  return !path.startsWith('/') && !/[\s\\#*?]/.test(uri);
}

/**
 * Whether a redirect URI sent with an authorization request matches one registered: by exact string (RFC 6749 §3.1.2,
 * RFC 9700 §4.1.3), or, for a registered loopback URI (http on 127.0.0.1, [::1] or localhost), on any port with the
 * same scheme, host, path and query (RFC 8252 §7.3: a native app listens on a port the system gives it).
 */
export function redirectUriMatches(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true;
  const asked = loopbackParts(requested);
  if (!asked) return false;
  return registered.some((uri) => {
    const own = loopbackParts(uri);
    return own !== undefined && own.host === asked.host && own.rest === asked.rest;
  });
}

/** A loopback redirect URI without its port, when it is one written in its canonical form (nothing ambiguous). */
function loopbackParts(uri: string): { host: string; rest: string } | undefined {
  if (!/^http:\/\//.test(uri) || uri.length > REDIRECT_URI_MAX_LENGTH) return undefined;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return undefined;
  }
  if (url.href !== uri) return undefined;
  if (!LOOPBACK_HOSTS.has(url.hostname) || url.username || url.password || url.hash) return undefined;
  return { host: url.hostname, rest: url.pathname + url.search };
}

/** The web origins (scheme, host, port) of http(s) redirect URIs, in order, once each; custom schemes have none. */
export function originsOfRedirectUris(uris: readonly string[]): string[] {
  const origins = new Set<string>();
  for (const uri of uris) {
    try {
      const url = new URL(uri);
      if (url.protocol === 'https:' || url.protocol === 'http:') origins.add(url.origin);
    } catch {
      // not a URL: no origin
    }
  }
  return [...origins];
}

/**
 * The browser origins a client's token, revocation, userinfo, device-authorization and PAR calls are answered CORS for
 * (docs/apps.md, "Browser applications and CORS"): the list set on the client, else, for a public client (a browser app
 * cannot keep a secret), the origins of its redirect URIs; a confidential client gets none by default.
 */
export function corsOriginsOf(client: {
  type: 'confidential' | 'public';
  redirectUris: readonly string[];
  allowedOrigins: readonly string[] | null;
}): string[] {
  if (client.allowedOrigins !== null) return [...client.allowedOrigins];
  return client.type === 'public' ? originsOfRedirectUris(client.redirectUris) : [];
}

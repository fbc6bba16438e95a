/**
 * Post-login destination checks (CONTRACT §4 login-target / login-request): every answer is a URL on an
 * allow-listed origin, never an off-site one. Framework-free so that it can be unit-tested on its own.
 *
 * Raw input is screened before parsing because browsers and servers disagree on odd URLs (backslashes read as
 * slashes, tabs and newlines silently dropped, percent-encoded slashes decoded twice): anything that could mean
 * different things to different parsers is refused outright rather than normalised.
 */

export interface LoginTargetInput {
  app?: unknown;
  redirect_to?: unknown;
  path?: unknown;
}

export interface LoginApps {
  /** App key -> origin (config.loginApps, already reduced to origins). */
  apps: Readonly<Record<string, string>>;
  /** Used when only `path` (or nothing) is given. */
  defaultApp?: string;
}

export type LoginTargetResult = { ok: true; url: string } | { ok: false; reason: string };

export const MAX_TARGET_LENGTH = 2048;

/** C0/C1 controls, DEL, any Unicode whitespace (incl. NBSP, line/paragraph separators) and the BOM. */
const UNSAFE_CHARS = /[\u0000-\u0020\u007f-\u009f\s\ufeff\u200b-\u200f\u2028\u2029]/;
/** %2F / %5C (encoded slash, backslash), %25 (double encoding) and encoded controls. */
const UNSAFE_ENCODINGS = /%(2f|5c|25|[01][0-9a-f]|7f)/i;
const APP_KEY = /^[A-Za-z0-9._-]{1,64}$/;
const ABSOLUTE_HTTP = /^https?:\/\/[^/\\?#]/i;

const fail = (reason: string): LoginTargetResult => ({ ok: false, reason });

/** The raw text between `scheme://` and the first `/`, `?` or `#`. */
function authorityOf(absolute: string): string {
  const rest = absolute.slice(absolute.indexOf('//') + 2);
  const end = rest.search(/[/?#]/);
  return end === -1 ? rest : rest.slice(0, end);
}

/**
 * The path segment of a relative reference, before its query or fragment: encoded slashes there can be decoded
 * by the target app into `//host`; in the query they are ordinary data.
 */
function pathPart(path: string): string {
  const end = path.search(/[?#]/);
  return end === -1 ? path : path.slice(0, end);
}

function screenRaw(value: string, field: string): string | undefined {
  if (value.length === 0) return `${field} is empty`;
  if (value.length > MAX_TARGET_LENGTH) return `${field} is too long`;
  if (UNSAFE_CHARS.test(value)) return `${field} contains whitespace or control characters`;
  if (value.includes('\\')) return `${field} contains a backslash`;
  return undefined;
}

/** An app key present in the allow-list as an own property (never `__proto__`, `constructor`, …). */
export function originOfApp(key: unknown, login: LoginApps): string | undefined {
  if (typeof key !== 'string' || !APP_KEY.test(key)) return undefined;
  return Object.prototype.hasOwnProperty.call(login.apps, key) ? login.apps[key] : undefined;
}

/**
 * A same-site path: exactly one leading `/` (so never `//host` or `/\host`, which browsers read as
 * protocol-relative), no encoded slashes or backslashes, no whitespace or control characters.
 */
export function checkPath(path: unknown): string | undefined {
  if (typeof path !== 'string') return 'path must be a string';
  const raw = screenRaw(path, 'path');
  if (raw) return raw;
  if (!path.startsWith('/') || path.startsWith('//')) return 'path must start with a single /';
  if (UNSAFE_ENCODINGS.test(pathPart(path))) return 'path contains an encoded slash, backslash, percent or control character';
  return undefined;
}

/** Joins a checked path to an origin, and re-checks that the WHATWG parser kept it there. */
function joinPath(origin: string, path: string): LoginTargetResult {
  let url: URL;
  try {
    url = new URL(path, `${origin}/`);
  } catch {
    return fail('path is not a valid URL path');
  }
  if (url.origin !== origin || url.username || url.password) return fail('path leaves the application');
  if (url.pathname.startsWith('//')) return fail('path must start with a single /');
  return { ok: true, url: url.href };
}

/**
 * An absolute http(s) URL whose origin equals an allow-listed origin exactly after WHATWG parsing, without
 * userinfo (`https://portal.test@evil.test` is evil.test) and without encoded slashes in its path.
 */
export function checkAbsoluteUrl(value: unknown, login: LoginApps): LoginTargetResult {
  if (typeof value !== 'string') return fail('redirect_to must be a string');
  const raw = screenRaw(value, 'redirect_to');
  if (raw) return fail(raw);
  if (!ABSOLUTE_HTTP.test(value)) return fail('redirect_to must be an absolute http(s) URL');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return fail('redirect_to is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return fail('redirect_to must be an absolute http(s) URL');
  if (url.username || url.password || authorityOf(value).includes('@')) return fail('redirect_to must not carry credentials');
  const allowed = Object.values(login.apps);
  if (!allowed.includes(url.origin)) return fail('redirect_to is not on an allow-listed origin');
  if (UNSAFE_ENCODINGS.test(url.pathname)) return fail('redirect_to path contains an encoded slash, backslash or percent');
  // A downstream app that redirects to its own pathname would read `//host` as another site.
  if (url.pathname.startsWith('//')) return fail('redirect_to path must start with a single /');
  return { ok: true, url: url.href };
}

/**
 * Resolves `app=`, `redirect_to=` or `path=` (optionally `app` + `path`) to one URL on an allow-listed origin.
 * `redirect_to` stands alone; `path` alone uses the default app; nothing at all means the default app's root.
 */
export function resolveLoginTarget(input: LoginTargetInput, login: LoginApps): LoginTargetResult {
  const { app, redirect_to: redirectTo, path } = input;
  if (redirectTo !== undefined) {
    if (app !== undefined || path !== undefined) return fail('redirect_to cannot be combined with app or path');
    return checkAbsoluteUrl(redirectTo, login);
  }
  let origin: string | undefined;
  if (app !== undefined) {
    origin = originOfApp(app, login);
    if (!origin) return fail('unknown app');
  } else {
    origin = login.defaultApp === undefined ? undefined : originOfApp(login.defaultApp, login);
    if (!origin) return fail('no default app is configured');
  }
  if (path === undefined) return joinPath(origin, '/');
  const problem = checkPath(path);
  if (problem || typeof path !== 'string') return fail(problem ?? 'path must be a string');
  return joinPath(origin, path);
}

/** Re-checks a stored destination against the current allow-list (the configuration may have changed). */
export function isAllowListedUrl(value: string, login: LoginApps): boolean {
  return checkAbsoluteUrl(value, login).ok;
}

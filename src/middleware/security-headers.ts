import type { Request, RequestHandler, Response } from 'express';

const CSP = 'Content-Security-Policy';
/** A source expression this module writes: an origin without path, or a private-use scheme (RFC 8252 §7.1). */
const ORIGIN_SOURCE = /^(?:https?:\/\/[a-z0-9.\-[\]:]+|[a-z][a-z0-9+.-]*:)$/;
const NEVER_SOURCES = new Set(['javascript:', 'data:', 'blob:', 'file:', 'filesystem:']);

/**
 * The CSP source a form submission that ends at `url` needs (issue 30): the URL's origin for http(s), its scheme for a
 * native app's private-use scheme, nothing for anything else. Paths are left out on purpose: CSP ignores a source's path
 * once a redirect happened (CSP3 §6.7.2.8), and every target here is reached through a redirect.
 */
export function formActionSource(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const source = parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.origin : parsed.protocol;
  return ORIGIN_SOURCE.test(source) && !NEVER_SOURCES.has(source) ? source : undefined;
}

/**
 * Widens this response's CSP `form-action 'self'` (the default on every answer) by the places a form on this page may
 * end at after the server's redirects: Chromium applies form-action to each redirect that follows a form submission.
 * Only a route that validated those targets (a registered redirect URI, an allow-listed return_to, an SP's ACS URL)
 * calls this, through a Page outcome's `formTargets` (written by the page kit's `writePage`).
 */
export function allowFormTargets(res: Response, targets: ReadonlyArray<string | undefined>): void {
  const sources = [...new Set(targets.map((t) => (t === undefined ? undefined : formActionSource(t))))].filter((s) => s !== undefined);
  const current = res.getHeader(CSP);
  if (sources.length === 0 || typeof current !== 'string') return;
  res.setHeader(CSP, current.replace(/(^|;)form-action 'self'(?=;|$)/, `$1form-action 'self' ${sources.join(' ')}`));
}
import helmet, { type HelmetOptions } from 'helmet';

/**
 * helmet's security headers at the cost of a loop (issue 10). With a static configuration (no function directive,
 * no per-request nonce) helmet answers every request with the same headers, so its own middleware runs once at start
 * against a recorder, and each response then gets that recorded list: helmet stays the source of every header and
 * value, without its chain of thirteen middlewares per request. A configuration that would vary per request is
 * refused here rather than frozen.
 */
export function securityHeaders(options: HelmetOptions | RecordedSecurityHeaders | (() => RecordedSecurityHeaders)): RequestHandler {
  if (typeof options !== 'function') {
    const recorded = 'set' in options && 'removed' in options ? options : recordSecurityHeaders(options as HelmetOptions);
    options = () => recorded;
  }
  const current = options;
  return (_req, res, next) => {
    // A function returns the headers in force (recorded again when the settings they depend on change).
    const { set, removed } = current();
    for (let i = 0; i < set.length; i++) res.setHeader(set[i][0], set[i][1]);
    for (let i = 0; i < removed.length; i++) res.removeHeader(removed[i]);
    next();
  };
}

/** The headers helmet sets and removes on every response, recorded once. */
export interface RecordedSecurityHeaders {
  readonly set: ReadonlyArray<readonly [string, string]>;
  readonly removed: readonly string[];
}

/**
 * Runs helmet's middleware once against a recorder (twice: a configuration whose two runs differ, such as a nonce,
 * is refused, since its headers cannot be computed once).
 */
export function recordSecurityHeaders(options: HelmetOptions): RecordedSecurityHeaders {
  const middleware = helmet(options);
  const first = record(middleware);
  if (JSON.stringify(record(middleware)) !== JSON.stringify(first)) {
    throw new Error('helmet configuration varies per request: it cannot be recorded once');
  }
  return first;
}

/** What one run of helmet's middleware does to a response. */
function record(middleware: ReturnType<typeof helmet>): { set: Array<[string, string]>; removed: string[] } {
  const set: Array<[string, string]> = [];
  const removed: string[] = [];
  const recorder = {
    setHeader(name: string, value: string | number | readonly string[]) {
      if (typeof value !== 'string') throw new Error(`helmet set ${name} to a non-string value`);
      set.push([name, value]);
      return recorder;
    },
    removeHeader(name: string) {
      removed.push(name);
    },
  };
  let completed = false;
  let failure: unknown;
  middleware(Object.freeze({}) as Request, recorder as unknown as Response, (err?: unknown) => {
    completed = true;
    failure = err;
  });
  if (!completed || failure) throw new Error('helmet did not complete synchronously with a static configuration', { cause: failure });
  return { set, removed };
}

/** The service's helmet configuration (the same for every response: CSP without nonces). */
export function securityHeaderOptions(baseUrl: string, imageOrigins: readonly string[] = []): HelmetOptions {
  return {
    contentSecurityPolicy: {
      directives: {
        defaultSrc: ["'self'"],
        styleSrc: ["'self'", "'unsafe-inline'"],
        scriptSrc: ["'self'"],
        // BRAND_LOGO_URL's origin (CONTRACT §15) when set.
        imgSrc: ["'self'", 'data:', ...imageOrigins],
        frameAncestors: ["'none'"],
        // Issue 30: forms post here only. A page whose forms end (through redirects, which Chromium checks against
        // form-action) at a registered client callback, an upstream provider or an SP widens it: allowFormTargets.
        formAction: ["'self'"],
        upgradeInsecureRequests: baseUrl.startsWith('https:') ? [] : null,
      },
    },
    frameguard: { action: 'deny' },
    // Not helmet's no-referrer: under it browsers send `Origin: null` on our own form posts, which the cookie
    // origin check (CONTRACT §3) must refuse. same-origin keeps the real Origin on our posts and still sends no
    // Referer (which may carry a code or token) to any other site.
    referrerPolicy: { policy: 'same-origin' },
  };
}

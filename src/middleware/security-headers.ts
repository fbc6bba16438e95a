import type { Request, RequestHandler, Response } from 'express';
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
    for (let i = 0; i < set.length; i++) res.setHeader(set[i]![0], set[i]![1]);
    for (let i = 0; i < removed.length; i++) res.removeHeader(removed[i]!);
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
        // Form posts end in redirects to registered client callbacks on other origins.
        formAction: null,
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

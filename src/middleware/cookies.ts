import { parse } from 'cookie';
import type { Express, Request } from 'express';

const PARSED = Symbol('parsedCookies');

type WithCookies = Request & { [PARSED]?: Record<string, string | undefined> };

/**
 * `req.cookies`, parsed from the Cookie header on first read and kept for the rest of the request: the routes that
 * look at a cookie (session cookies, CSRF, origin checks) get the same object a cookie parser would give, and the
 * requests that never look at one (Bearer APIs, discovery, health) pay nothing. Defined once on the app's request
 * prototype.
 */
export function installLazyCookies(app: Express): void {
  Object.defineProperty(app.request, 'cookies', {
    configurable: true,
    get(this: WithCookies) {
      let cookies = this[PARSED];
      if (cookies === undefined) {
        const header = this.headers.cookie;
        // No prototype: a cookie named `__proto__` or `constructor` is just a name.
        const none: Record<string, string | undefined> = Object.create(null);
        cookies = header ? parse(header) : none;
        this[PARSED] = cookies;
      }
      return cookies;
    },
    set(this: WithCookies, value: Record<string, string | undefined>) {
      this[PARSED] = value;
    },
  });
}

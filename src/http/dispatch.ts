import FindMyWay from 'find-my-way';
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { AppError } from '../errors';
import { RouteSeries } from '../lib/metrics';
import { enterRequest, leaveRequest } from '../lib/request-context';

/** A step of a route's chain: a middleware, or an error handler (four parameters, as Express tells them apart). */
export type Step = RequestHandler | ErrorRequestHandler;

interface Entry {
  /** The duration series of the route's full declared pattern, made once (none for preflights and static files). */
  series: RouteSeries | undefined;
  chain: readonly Step[];
  /** Static files: the part of the path after this many characters is what the file handler sees as `req.url`. */
  strip?: number;
}

const FIND_MY_WAY_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

interface Fallback {
  /** Lower-case path prefix, e.g. `/api`: the path itself and everything below it. */
  prefix: string;
  chain: readonly Step[];
}

/**
 * Runs a chain the way Express runs a route's stack: `next()` goes to the next middleware, `next(err)` to the next error
 * handler, a thrown error or a rejected promise is `next(err)`; past the end, `done`.
 */
export function runChain(chain: readonly Step[], req: Request, res: Response, done: NextFunction): void {
  let index = 0;
  const next = (err?: unknown): void => {
    const failed = err !== undefined && err !== null;
    while (index < chain.length) {
      const step = chain[index++];
      let result: unknown;
      const before = enterRequest(req);
      try {
        if (handlesErrors(step)) {
          if (!failed) continue;
          result = step(err, req, res, next);
        } else {
          if (failed) continue;
          result = step(req, res, next);
        }
      } catch (thrown) {
        next(thrown ?? new Error('thrown undefined'));
        return;
      } finally {
        leaveRequest(before);
      }
      if (result instanceof Promise) result.then(undefined, (rejected: unknown) => next(rejected ?? new Error('Rejected promise')));
      return;
    }
    done(failed ? err : undefined);
  };
  next();
}

/**
 * The app's one router (issue 33): a single radix table (find-my-way, the router Fastify uses) built from the route
 * declarations of every scope, mounted as one step of the Express app after the global step. Every request goes
 * through it: a declared route runs its chain (the scope's steps, then its own); a request no route matched runs the
 * fallback of the longest prefix it is under (under /api: the limiter, then 404), else goes on to the app's 404.
 * Matching is Express's: case-insensitive, a trailing slash ignored, parameters percent-decoded (a malformed escape
 * is a 400), HEAD answered by GET routes, OPTIONS on a known path without a preflight route answered with `Allow`.
 */
export class Dispatcher {
  private readonly table = FindMyWay<FindMyWay.HTTPVersion.V1>({
    caseSensitive: false,
    ignoreTrailingSlash: true,
    // Express has no limit on a parameter's length (a client id may be a URL); Node's header limit bounds the path.
    maxParamLength: 16 * 1024,
    onBadUrl: () => undefined,
  });
  private readonly methods = new Set<string>();
  private readonly fallbacks: Fallback[] = [];

  /** Adds a route: `method` in any case, `path` the full Express-style pattern (`/api/users/:userId`). */
  on(method: string, path: string, label: string | undefined, chain: readonly Step[]): void {
    const upper = method.toUpperCase();
    const entry: Entry = { series: label === undefined ? undefined : new RouteSeries(label), chain };
    this.add(upper, path, entry);
  }

  /** Static files under `path` (GET and HEAD): the chain sees `req.url` relative to it, as under a mounted router. */
  files(path: string, chain: readonly Step[]): void {
    const base = path.replace(/\/+$/, '');
    const entry: Entry = { series: undefined, chain, strip: base.length };
    this.add('GET', `${base}/*`, entry);
  }

  /** What a request no route matched runs when its path is `prefix` or below it (longest prefix first). */
  fallback(prefix: string, chain: readonly Step[]): void {
    this.fallbacks.push({ prefix: prefix.toLowerCase().replace(/\/+$/, ''), chain });
    this.fallbacks.sort((a, b) => b.prefix.length - a.prefix.length);
  }

  private add(method: string, path: string, entry: Entry): void {
    if (!FIND_MY_WAY_METHODS.has(method)) throw new Error(`${method} ${path}: not an HTTP method the router knows`);
    this.methods.add(method);
    if (isMethod(this.methods, method)) this.table.on(method, path, noop, entry);
  }

  /**
   * The route of `method` at `url`. Express answers HEAD with the GET route of the path (Node leaves the body out): a
   * HEAD request no HEAD route matched looks in the GET table, which is not copied into a HEAD table (a start then
   * builds one table less: find-my-way compiles a matcher function for every node, issue 33's start time).
   */
  private find(method: string, url: string): FindMyWay.FindResult<FindMyWay.HTTPVersion.V1> | null {
    const found = isMethod(this.methods, method) ? this.table.find(method, url) : null;
    if (found !== null || method !== 'HEAD') return found;
    return isMethod(this.methods, 'GET') ? this.table.find('GET', url) : null;
  }

  /** The one step the app mounts. */
  readonly handle: RequestHandler = (req, res, next) => {
    const found = this.find(req.method, req.url);
    if (found) {
      const entry: Entry | null = found.store;
      // onBadUrl's answer: a malformed percent-escape in the path (CONTRACT §8: the client's error).
      if (entry === null) return next(new AppError('validation_error', 'Malformed percent-encoding in the URL'));
      if (definedParams(found.params)) req.params = found.params;
      if (entry.series !== undefined) req.routeSeries = entry.series;
      if (entry.strip === undefined) return runChain(entry.chain, req, res, (err) => (err ? next(err) : this.unmatched(req, res, next)));
      const url = req.url;
      req.url = url.slice(entry.strip) || '/';
      return runChain(entry.chain, req, res, (err) => {
        req.url = url;
        if (err) next(err);
        else this.unmatched(req, res, next);
      });
    }
    this.unmatched(req, res, next);
  };

  private unmatched(req: Request, res: Response, next: NextFunction): void {
    if (req.method === 'OPTIONS') {
      const allow = this.allowed(req.url);
      if (allow.length > 0) return answerOptions(res, allow);
    }
    const q = req.url.indexOf('?');
    const path = (q === -1 ? req.url : req.url.slice(0, q)).toLowerCase();
    for (const { prefix, chain } of this.fallbacks) {
      if (path === prefix || path.startsWith(`${prefix}/`)) return runChain(chain, req, res, next);
    }
    next();
  }

  /** The methods some route answers at this path (Express's automatic OPTIONS answer). */
  private allowed(url: string): string[] {
    const allow: string[] = [];
    for (const method of new Set([...this.methods, 'HEAD'])) {
      const found = this.find(method, url);
      if (found && found.store !== null) allow.push(method);
    }
    return allow.sort();
  }
}

const noop = (): void => undefined;

/** Express tells an error handler by its four parameters. */
function handlesErrors(step: Step): step is ErrorRequestHandler {
  return step.length === 4;
}

/** Whether some route was added for this method (so the table can be asked for it). */
function isMethod(methods: ReadonlySet<string>, method: string): method is FindMyWay.HTTPMethod {
  return methods.has(method);
}

/** find-my-way's parameters are strings: the route patterns here have no optional parameter. */
function definedParams(params: Record<string, string | undefined>): params is Record<string, string> {
  for (const key in params) if (params[key] === undefined) return false;
  return true;
}

/** Express's answer to OPTIONS on a path with routes but no OPTIONS route (router's sendOptionsResponse). */
function answerOptions(res: Response, methods: string[]): void {
  const allow = methods.join(', ');
  res.setHeader('Allow', allow);
  res.setHeader('Content-Length', Buffer.byteLength(allow));
  res.setHeader('Content-Type', 'text/plain');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.end(allow);
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Express } from 'express';
import proxyaddr from 'proxy-addr';
import { AppError } from '../errors';
import { bearerTokenOf } from './authenticate';
import { laneAnswerOf, type LaneAnswer, type LaneResult } from '../routes/route';
import { listDeclaredRoutes } from '../routes/route-table';
import type { Principal } from '../services/principal';
import type { Metrics } from './metrics';
import type { LaneRateLimit } from './rate-limit';
import { isUnloggedUrl, requestIdOf, type AccessLog } from './request-log';
import type { RecordedSecurityHeaders } from './security-headers';

export interface PublicLaneDeps {
  metrics: Metrics;
  accessLog: AccessLog;
  securityHeaders: RecordedSecurityHeaders;
  /** What an authenticated lane route (under /api) needs: the /api limiter and the live check of a Bearer token. */
  api?: {
    rateLimit: LaneRateLimit;
    /** The principal of an access token, as `authenticate` resolves it (resolvePrincipal). */
    resolvePrincipal: (token: string) => Promise<Principal | undefined>;
    /** The app's compiled `trust proxy` setting, read per request as Express's `req.ip` getter does. */
    trustProxy: () => (address: string, hop: number) => boolean;
  };
}

/** A lane answer ready to write: status, body bytes and every header. */
interface Prepared {
  status: number;
  bytes: Buffer;
  headers: string[];
}

interface LaneRoute {
  /** The metrics route label (the declared path, as the Express path labels it). */
  label: string;
  logged: boolean;
  noStore: boolean;
  cacheControl: string | undefined;
  /** Authenticated (under /api): a Bearer header, the /api limiter, the live check; `allowClientTokens` as declared. */
  bearer: { allowClientTokens: boolean } | undefined;
  answer: LaneAnswer;
}

/**
 * The lane (issue 10): the routes declared `lane: true` answered before the Express stack, because they are called
 * at rates where Express's router, prototype swaps and a dozen middlewares cost more than the answer itself: GET
 * /health and the discovery documents at /.well-known (public), and GET /api/auth/me (authenticated).
 *
 * Only a request that is exactly `GET <declared path>` (no query string, no trailing slash, no Origin header) takes
 * the lane, and for an authenticated route only one with a Bearer header and no body (no Content-Length or
 * Transfer-Encoding: Express's parsers would read it); anything else, HEAD, CORS and cookie-authenticated requests
 * included, goes through Express to the same declared handler. An answer in the lane
 * carries what the Express path gives every answer: helmet's recorded security headers, the request id, the route's
 * Cache-Control (no-store + Pragma, or its declared cacheControl), the duration histogram with the same route label,
 * and the same access-log line. test/e2e/public-lane.test.ts compares both ways.
 *
 * An authenticated lane route runs what the Express path runs before its handler: the /api limiter (counted once:
 * LaneRateLimit) with `req.ip` as Express computes it, then the live check of the Bearer token (resolvePrincipal, one
 * round trip). Whatever is not a success there (rate limited, no valid token, a client token where the route takes
 * none, an error) goes to Express, which answers it in the contract's shape.
 *
 * A public lane route is /health or a fixed path under /.well-known; an authenticated one a fixed path under /api/.
 * Anything else (/metrics, its token) throws when the lane is installed.
 */
export function installPublicLane(app: Express, deps: PublicLaneDeps): void {
  const routes = new Map<string, LaneRoute>();
  for (const r of listDeclaredRoutes(app)) {
    const answer = laneAnswerOf(r.decl);
    if (!answer) continue;
    const authenticated = r.decl.auth !== 'none';
    if (r.path.includes(':')) throw new Error(`${r.path}: a lane route has a fixed path`);
    if (authenticated) {
      if (!r.path.startsWith('/api/')) throw new Error(`${r.path}: an authenticated lane route is under /api (its limiter)`);
      if (!deps.api) throw new Error(`${r.path}: an authenticated lane route needs the /api limiter and the live check`);
    } else if (!(r.path === '/health' || r.path.startsWith('/.well-known/'))) {
      // Only public documents: nothing under /api (its limiter) or /metrics (its token) can take the public lane.
      throw new Error(`${r.path}: a public lane route is /health or a fixed path under /.well-known, outside /api`);
    }
    if (routes.has(r.path)) throw new Error(`${r.path}: declared twice in the lane`);
    routes.set(r.path, {
      label: r.path,
      logged: !isUnloggedUrl(r.path),
      noStore: r.decl.noStore === true,
      cacheControl: r.decl.cacheControl,
      bearer: authenticated ? { allowClientTokens: r.decl.auth === 'user-or-client' } : undefined,
      answer,
    });
  }
  if (routes.size === 0) return;

  const security: string[] = deps.securityHeaders.set.flat();
  const serialized = new WeakMap<object, Buffer>();
  const bytesOf = (route: LaneRoute, body: unknown): Buffer => {
    // A principal's answer is new every time; a public body the handler returns again and again (a document built
    // once) is serialised once.
    if (route.bearer || typeof body !== 'object' || body === null) return Buffer.from(JSON.stringify(body));
    let bytes = serialized.get(body);
    if (!bytes) {
      bytes = Buffer.from(JSON.stringify(body));
      serialized.set(body, bytes);
    }
    return bytes;
  };

  /** The answer as sent, or undefined when it cannot be sent as JSON with that status (Express decides). */
  const prepare = (route: LaneRoute, id: string, result: LaneResult): Prepared | undefined => {
    if (result.body === undefined || !Number.isInteger(result.status) || result.status < 200 || result.status > 599) return undefined;
    let bytes: Buffer;
    try {
      bytes = bytesOf(route, result.body);
    } catch {
      return undefined;
    }
    const headers = security.slice();
    headers.push('X-Request-Id', id, 'Content-Type', 'application/json; charset=utf-8', 'Content-Length', String(bytes.length));
    if (route.noStore) headers.push('Cache-Control', 'no-store', 'Pragma', 'no-cache');
    else if (route.cacheControl !== undefined && result.status < 400) headers.push('Cache-Control', route.cacheControl);
    return { status: result.status, bytes, headers };
  };

  const write = (route: LaneRoute, res: ServerResponse, started: number, id: string, answer: Prepared): void => {
    // Headers the limiter set on the response (RateLimit, RateLimit-Policy) are merged in by writeHead.
    res.writeHead(answer.status, answer.headers);
    res.end(answer.bytes);
    const ms = performance.now() - started;
    deps.metrics.observe('GET', route.label, answer.status, ms / 1000);
    if (route.logged) deps.accessLog.write(id, 'GET', route.label, answer.status, ms, true);
  };

  // Express's app function calls app.handle for every request (the HTTP server's and supertest's alike); its types
  // do not describe it.
  const express = app as unknown as { handle: (req: IncomingMessage, res: ServerResponse, callback?: (err?: unknown) => void) => void };
  const handle = express.handle.bind(app);

  /**
   * An authenticated route runs first what the Express path runs before its handler: the /api limiter (with `req.ip`
   * as Express's getter computes it, which reads the same value after a hand-over), then the live check of the Bearer
   * token. Whatever is not a success goes to Express: the limiter's 429, no principal, a client token the route does
   * not take, a handler that throws, an answer that cannot be written as prepared. The limiter's outcome goes with
   * the request, so Express does not count it again. A client that went away meanwhile gets the access-log line
   * Express gives it (`request aborted`), and no further work.
   */
  const answerInLane = async (route: LaneRoute, req: IncomingMessage, res: ServerResponse, callback: ((err?: unknown) => void) | undefined, token: string | undefined): Promise<void> => {
    const started = performance.now();
    const id = requestIdOf(req);
    const outcome = await laneOutcome(route, req, res, token);
    if (res.destroyed || res.headersSent) {
      if (route.logged && !res.headersSent) deps.accessLog.write(id, 'GET', route.label, res.statusCode, performance.now() - started, false);
      return;
    }
    const answer = outcome.result && prepare(route, id, outcome.result);
    if (answer) return write(route, res, started, id, answer);
    // Not answered here (see above; also no body, an odd status or a body JSON cannot write): Express answers it.
    if (outcome.counted) deps.api!.rateLimit.handOver(req, outcome.counted.limited);
    handle(req, res, callback);
  };

  /** The lane's result, or none (Express answers), and whether the limiter counted the request. */
  const laneOutcome = async (
    route: LaneRoute,
    req: IncomingMessage,
    res: ServerResponse,
    token: string | undefined,
  ): Promise<{ result?: LaneResult; counted?: { limited: unknown } }> => {
    const api = deps.api;
    let counted: { limited: unknown } | undefined;
    try {
      let principal: Principal | undefined;
      if (token !== undefined && api) {
        Object.defineProperty(req, 'ip', { value: proxyaddr(req, api.trustProxy()), configurable: true, enumerable: true, writable: true });
        const limited = await api.rateLimit.count(req, res);
        // Only the limiter's own answer (429) is an outcome to pass on; anything else it threw, Express runs it again.
        if (limited !== undefined && !isRateLimited(limited)) return {};
        counted = { limited };
        if (limited !== undefined || res.destroyed) return { counted };
        principal = await api.resolvePrincipal(token);
        if (!principal || (principal.clientId && !route.bearer?.allowClientTokens)) return { counted };
      }
      return { result: await route.answer(principal), counted };
    } catch {
      // Nothing was written: Express runs the same route again and answers whatever it throws in the contract's shape.
      return { counted };
    }
  };

  const serve = (req: IncomingMessage, res: ServerResponse, callback?: (err?: unknown) => void): void => {
    const route = req.method === 'GET' && req.headers.origin === undefined ? routes.get(req.url ?? '') : undefined;
    if (!route) return handle(req, res, callback);
    let token: string | undefined;
    if (route.bearer) {
      // A body (Express's parsers would read it) or no Bearer header (a cookie session): Express.
      token = bearerTokenOf(req);
      if (token === undefined || hasBody(req)) return handle(req, res, callback);
    }
    // Whatever still fails (a socket error while writing) ends this response, never the process.
    answerInLane(route, req, res, callback, token).catch(() => res.destroy());
  };
  express.handle = serve;
}

/**
 * A request Express's body parsers would look at: any Content-Length (even 0: they still check its type, charset and
 * encoding, and answer 415 for ones they cannot read) or Transfer-Encoding, as type-is' hasBody decides.
 */
function hasBody(req: IncomingMessage): boolean {
  return req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
}

/** The /api limiter's refusal (createRateLimit's handler), as opposed to anything else it might throw. */
function isRateLimited(err: unknown): boolean {
  return err instanceof AppError && err.code === 'rate_limited';
}

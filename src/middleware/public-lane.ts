import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Express } from 'express';
import { laneAnswerOf, type LaneResult } from '../routes/route';
import { listDeclaredRoutes } from '../routes/route-table';
import type { Metrics } from './metrics';
import { isUnloggedUrl, requestIdOf, type AccessLog } from './request-log';
import type { RecordedSecurityHeaders } from './security-headers';

export interface PublicLaneDeps {
  metrics: Metrics;
  accessLog: AccessLog;
  securityHeaders: RecordedSecurityHeaders;
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
  answer: () => Promise<LaneResult>;
}

/**
 * The public lane (issue 10): the routes declared `lane: true` (GET /health, the discovery documents at /.well-known)
 * answered before the Express stack, because load balancers and clients poll them at rates where Express's router,
 * prototype swaps and a dozen middlewares cost more than the answer itself.
 *
 * Only a request that is exactly `GET <declared path>` (no query string, no trailing slash, no Origin header) takes
 * the lane; anything else, HEAD and CORS requests included, goes through Express to the same declared handler. An
 * answer in the lane carries what the Express path gives every answer: helmet's recorded security headers, the
 * request id, the route's Cache-Control (no-store + Pragma, or its declared cacheControl), the duration histogram
 * with the same route label, and the same access-log line. test/e2e/public-lane.test.ts compares both ways.
 *
 * A lane route is /health or a fixed path under /.well-known: anything else (under /api, the limiter would be
 * bypassed; /metrics, its token) throws when the lane is installed.
 */
export function installPublicLane(app: Express, deps: PublicLaneDeps): void {
  const routes = new Map<string, LaneRoute>();
  for (const r of listDeclaredRoutes(app)) {
    const answer = laneAnswerOf(r.decl);
    if (!answer) continue;
    // Only public documents: nothing under /api (its limiter) or /metrics (its token) can take the lane.
    if (!(r.path === '/health' || r.path.startsWith('/.well-known/')) || r.path.includes(':')) {
      throw new Error(`${r.path}: a lane route is /health or a fixed path under /.well-known, outside /api`);
    }
    if (routes.has(r.path)) throw new Error(`${r.path}: declared twice in the lane`);
    routes.set(r.path, { label: r.path, logged: !isUnloggedUrl(r.path), noStore: r.decl.noStore === true, cacheControl: r.decl.cacheControl, answer });
  }
  if (routes.size === 0) return;

  const security: string[] = deps.securityHeaders.set.flat();
  const serialized = new WeakMap<object, Buffer>();
  const bytesOf = (body: unknown): Buffer => {
    if (typeof body !== 'object' || body === null) return Buffer.from(JSON.stringify(body));
    let bytes = serialized.get(body);
    if (!bytes) {
      bytes = Buffer.from(JSON.stringify(body));
      // A body the handler returns again and again (a document built once) is serialised once.
      serialized.set(body, bytes);
    }
    return bytes;
  };

  /** The answer as sent, or undefined when it cannot be sent as JSON with that status (Express decides). */
  const prepare = (route: LaneRoute, id: string, result: LaneResult): Prepared | undefined => {
    if (result.body === undefined || !Number.isInteger(result.status) || result.status < 200 || result.status > 599) return undefined;
    let bytes: Buffer;
    try {
      bytes = bytesOf(result.body);
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
  const serve = (req: IncomingMessage, res: ServerResponse, callback?: (err?: unknown) => void): void => {
    const route = req.method === 'GET' && req.headers.origin === undefined ? routes.get(req.url ?? '') : undefined;
    if (!route) return handle(req, res, callback);
    const started = performance.now();
    const id = requestIdOf(req);
    route
      .answer()
      .then(
        (result) => {
          if (res.headersSent || res.destroyed) return;
          const answer = prepare(route, id, result);
          // Not sendable as prepared (no body, an odd status, a body JSON cannot write): Express answers it.
          if (!answer) return handle(req, res, callback);
          write(route, res, started, id, answer);
        },
        // Nothing was written: Express runs the same handler again and answers whatever it throws in the contract's shape.
        () => handle(req, res, callback),
      )
      // Whatever still fails (a socket error while writing) ends this response, never the process.
      .catch(() => res.destroy());
  };
  express.handle = serve;
}

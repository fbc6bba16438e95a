import type { RequestHandler } from 'express';
import type { Metrics } from './metrics';
import { isUnloggedUrl, requestIdOf, type AccessLogWriter } from './request-log';
import type { RecordedSecurityHeaders } from './security-headers';

/**
 * The global steps of every answer folded into one step with one `close` listener (issue 33): the request id (a sane
 * incoming X-Request-Id is kept, else a UUID; sent back and set as `req.id`, which error logs and security events
 * carry), the recorded security headers, and when the answer closes the duration histogram (finished answers, by
 * route label) and the access-log line (not for GET /health). Mounted first on the app, before its one router.
 */
export function createGlobalStep(deps: {
  metrics: Metrics;
  accessLog: AccessLogWriter;
  /** The security headers in force (recorded again when the settings they depend on change). */
  headers: () => RecordedSecurityHeaders;
}): RequestHandler {
  const { metrics, accessLog, headers } = deps;
  return (req, res, next) => {
    const started = performance.now();
    const id = requestIdOf(req);
    req.id = id;
    req.arrivedAt = started;
    // Set here on every request (the router replaces it when a declared route matched): every request object takes the
    // same shape, whichever route it ends at.
    req.routeSeries = undefined;
    req.serviceContext = undefined;
    res.setHeader('X-Request-Id', id);
    const { set, removed } = headers();
    for (let i = 0; i < set.length; i++) res.setHeader(set[i][0], set[i][1]);
    for (let i = 0; i < removed.length; i++) res.removeHeader(removed[i]);
    const logged = !isUnloggedUrl(req.url);
    // 'close' is emitted once per response: `on`, without the wrapper `once` allocates and removes.
    res.on('close', () => {
      const elapsed = performance.now() - started;
      const finished = res.writableFinished;
      if (finished) metrics.record(req, res.statusCode, elapsed / 1000);
      if (!logged) return;
      const url = req.originalUrl;
      const q = url.indexOf('?');
      accessLog(id, req.method, q === -1 ? url : url.slice(0, q), res.statusCode, elapsed, finished);
    });
    next();
  };
}

import type { RequestHandler } from 'express';
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import type { Logger } from '../lib/logger';

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._-]{8,128}$/;

/**
 * Request id and one access-log line per request, at the cost of a single log call: a sane incoming X-Request-Id is
 * kept, else a UUID is made; either is sent back and set as `req.id` (error logs and security events carry it). The
 * line has the path only (the query may carry codes and tokens); 5xx answers log at error, requests the client
 * abandoned at warn, the rest at info. GET /health (polled by load balancers) is not logged.
 *
 * The line is written by a logger on the same stream without the service logger's redaction (which walks every
 * object logged): its fields are fixed here and never carry a credential. The service logger's level decides.
 */
export function requestLog(logger: Logger): RequestHandler {
  const access = pino({ level: 'trace', base: undefined }, Reflect.get(logger, pino.symbols.streamSym) as pino.DestinationStream);
  return (req, res, next) => {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && REQUEST_ID_PATTERN.test(incoming) ? incoming : randomUUID();
    req.id = id;
    res.setHeader('X-Request-Id', id);
    if (req.url === '/health') return next();
    const started = performance.now();
    res.once('close', () => {
      const status = res.statusCode;
      const finished = res.writableFinished;
      const level = status >= 500 ? 'error' : finished ? 'info' : 'warn';
      if (!logger.isLevelEnabled(level)) return;
      const url = req.originalUrl;
      const q = url.indexOf('?');
      access[level](
        {
          req: { id, method: req.method, path: q === -1 ? url : url.slice(0, q) },
          res: { statusCode: status },
          responseTime: Math.round(performance.now() - started),
        },
        finished ? 'request completed' : 'request aborted',
      );
    });
    next();
  };
}

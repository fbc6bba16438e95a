import type { IncomingMessage } from 'node:http';
import { randomUUID } from 'node:crypto';
import { createUnredactedLogger, type Logger } from '../lib/logger';

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._-]{8,128}$/;

/** A sane incoming X-Request-Id is kept, else a UUID is made. */
export function requestIdOf(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID_PATTERN.test(incoming) ? incoming : randomUUID();
}

/** GET /health (polled by load balancers) is not logged. */
export const isUnloggedUrl = (url: string): boolean => url === '/health';

/** Writes one access-log line: (request id, method, path without query, status, milliseconds, finished). */
export type AccessLogWriter = (id: string, method: string, path: string, status: number, responseTimeMs: number, finished: boolean) => void;

/**
 * One access-log line per request, at the cost of a single log call, written by the app's global step
 * (middleware/global-step.ts) when the answer closes. The line has the path only (the query may carry codes and
 * tokens); 5xx answers log at error, requests the client abandoned at warn, the rest at info. GET /health is not
 * logged (isUnloggedUrl).
 *
 * The line is written by a logger on the same stream without the service logger's redaction (which walks every
 * object logged): its fields are fixed here and never carry a credential. The service logger's level decides.
 */
export function createAccessLog(logger: Logger): AccessLogWriter {
  const access = createUnredactedLogger(logger);
  return (id, method, path, status, responseTimeMs, finished) => {
    const level = status >= 500 ? 'error' : finished ? 'info' : 'warn';
    if (!logger.isLevelEnabled(level)) return;
    access[level](
      { req: { id, method, path }, res: { statusCode: status }, responseTime: Math.round(responseTimeMs) },
      finished ? 'request completed' : 'request aborted',
    );
  };
}

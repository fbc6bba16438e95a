import http from 'node:http';

/** CONTRACT §8: headers and body must have arrived within this time, else Node answers 408 and closes. */
export const REQUEST_TIMEOUT_MS = 30_000;

/**
 * The HTTP server of the app (not listening yet). Slow-loris defence: Node's `headersTimeout` and
 * `requestTimeout` bound how long a client may take to send its headers and its whole request; the connections
 * are checked every `checkIntervalMs` (Node's default of 30 s would let a request linger up to twice the limit).
 */
export function createHttpServer(
  handler: http.RequestListener,
  options: { requestTimeoutMs?: number; checkIntervalMs?: number } = {},
): http.Server {
  const requestTimeout = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  return http.createServer(
    {
      requestTimeout,
      headersTimeout: requestTimeout,
      connectionsCheckingInterval: options.checkIntervalMs ?? Math.min(5_000, requestTimeout),
    },
    handler,
  );
}

import http from 'node:http';
import net from 'node:net';

/** CONTRACT §8: headers and body must have arrived within this time, else Node answers 408 and closes. */
export const REQUEST_TIMEOUT_MS = 30_000;

/** How often a draining server looks for connections that carry no request any more. */
const DRAIN_SWEEP_MS = 100;

interface ConnectionState {
  /** Requests received on the connection and not yet answered (pipelined requests count each). */
  open: number;
  /** When the connection last carried a request (its opening, or its last answer). */
  idleSince: number;
}

/** An HTTP server that can stop without failing a request (see `drain`). */
export interface HttpServer extends http.Server {
  /**
   * Stops accepting connections and resolves once every connection has closed, failing no request (CONTRACT §23):
   * every request that arrives while draining, on any connection, is answered, with `Connection: close`; a
   * connection is closed by the server only while it carries no request and after it has been idle for
   * `keepAliveTimeout`, the time after which the server closes an idle connection anyway and which it announces
   * in `Keep-Alive: timeout=…` (clients stop reusing a connection before then). Node's own `close()` instead destroys
   * every idle keep-alive connection at once: a request already on its way on one of them gets ECONNRESET.
   */
  drain(): Promise<void>;
}

/**
 * The HTTP server of the app (not listening yet). Slow-loris defence: Node's `headersTimeout` and
 * `requestTimeout` bound how long a client may take to send its headers and its whole request; the connections
 * are checked every `checkIntervalMs` (Node's default of 30 s would let a request linger up to twice the limit).
 */
export function createHttpServer(
  handler: http.RequestListener,
  options: { requestTimeoutMs?: number; checkIntervalMs?: number } = {},
): HttpServer {
  const requestTimeout = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const connections = new Map<net.Socket, ConnectionState>();
  const answering = new Set<http.ServerResponse>();
  let draining = false;
  const server = http.createServer(
    {
      requestTimeout,
      headersTimeout: requestTimeout,
      connectionsCheckingInterval: options.checkIntervalMs ?? Math.min(5_000, requestTimeout),
    },
    (req, res) => {
      const state = connections.get(req.socket);
      answering.add(res);
      if (state) state.open++;
      // 'close' is emitted once per response: `on`, without the wrapper `once` allocates and removes.
      res.on('close', () => {
        answering.delete(res);
        if (!state) return;
        state.open--;
        state.idleSince = Date.now();
      });
      // Node then closes the connection once this answer is sent: the client opens its next one elsewhere.
      if (draining) res.setHeader('Connection', 'close');
      handler(req, res);
    },
  );
  server.on('connection', (socket: net.Socket) => {
    connections.set(socket, { open: 0, idleSince: Date.now() });
    socket.once('close', () => connections.delete(socket));
  });
  const drain = () =>
    new Promise<void>((resolve) => {
      draining = true;
      // Requests being handled: their answers, when not begun yet, close the connection too.
      for (const res of answering) if (!res.headersSent) res.setHeader('Connection', 'close');
      const sweep = () => {
        const idleBefore = Date.now() - server.keepAliveTimeout;
        for (const [socket, state] of connections) {
          if (state.open === 0 && state.idleSince <= idleBefore) socket.destroy();
        }
      };
      const sweeper = setInterval(sweep, DRAIN_SWEEP_MS);
      sweeper.unref();
      // net.Server's close, not http.Server's: stop accepting and wait for the connections, without destroying the
      // idle ones at once.
      net.Server.prototype.close.call(server, () => {
        clearInterval(sweeper);
        stopConnectionsChecking(server);
        resolve();
      });
      if (connections.size === 0) return;
      sweep();
    });
  return Object.assign(server, { drain });
}

/**
 * http.Server's own close() stops the timer that checks its connections against `requestTimeout`; net.Server's close,
 * which `drain` uses, does not, so a drained server would keep that timer running. Node keeps the timer under a
 * symbol of its own; when a Node version names it otherwise, nothing is found and nothing is done.
 */
function stopConnectionsChecking(server: http.Server): void {
  const key = Object.getOwnPropertySymbols(server).find((s) => s.description === 'http.server.connectionsCheckingInterval');
  const timer: unknown = key ? Reflect.get(server, key) : undefined;
  if (isTimer(timer)) clearInterval(timer);
}

/** A Node timer object (what setInterval returns). */
function isTimer(value: unknown): value is NodeJS.Timeout {
  return typeof value === 'object' && value !== null && 'hasRef' in value && 'refresh' in value;
}

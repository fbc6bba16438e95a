import http from 'node:http';
import net from 'node:net';
import type { Express } from 'express';

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
  options: {
    requestTimeoutMs?: number;
    checkIntervalMs?: number;
    /**
     * The prototypes the request and response objects are made with (an Express app's `app.request` and
     * `app.response`; see `madeWithPrototypes`). Without them, Node's own.
     */
    prototypes?: { request: object; response: object };
  } = {},
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
      ...(options.prototypes && madeWithPrototypes(options.prototypes)),
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
 * The server of an Express app, as the service runs it: `createHttpServer` with the app's request and response
 * prototypes, so that Node makes every request and response object with them (`madeWithPrototypes`).
 */
export function createAppServer(app: Express, options: { requestTimeoutMs?: number; checkIntervalMs?: number } = {}): HttpServer {
  return createHttpServer(app, { ...options, prototypes: { request: app.request, response: app.response } });
}

/**
 * The constructors of the request and response objects of Node's http server (its `IncomingMessage` and
 * `ServerResponse` options) that make Node's objects with the given prototypes from the start (issue 33).
 *
 * Express's `app.handle` gives every request and response the app's prototypes (`app.request`, `app.response`) with
 * `Object.setPrototypeOf`, on objects Node has just made. V8 then gives each object a map of its own, and the code
 * that reads or writes them afterwards (Node's HTTP code, Express, every step) meets shapes it has not seen before:
 * slow property access and more garbage (docs/performance.md: about two thirds of the CPU of a `/health` request).
 * Made with the app's prototypes, the objects of a kind share their shapes, and `app.handle`'s `setPrototypeOf` finds
 * the prototype in place and changes nothing. `instanceof` holds for Node's classes (the prototypes inherit from them).
 *
 * Node's constructors are functions, called here on the new object (`Reflect.construct` with another `new.target`
 * measured five times slower than Express's way); named like Node's, so that stack traces read as before. They are
 * tried once here (a request and a response on an unconnected socket): where Node's cannot be called that way (a Node
 * where they became classes), undefined, and the server uses Node's own (Express then sets the prototypes as before).
 */
export function madeWithPrototypes(prototypes: {
  request: object;
  response: object;
}): { IncomingMessage: typeof http.IncomingMessage; ServerResponse: typeof http.ServerResponse } | undefined {
  const { request, response } = prototypes;
  if (!(request instanceof http.IncomingMessage) || !(response instanceof http.ServerResponse)) {
    throw new TypeError('the prototypes must inherit from http.IncomingMessage and http.ServerResponse');
  }
  const AppRequest = function IncomingMessage(this: http.IncomingMessage, socket: net.Socket): void {
    http.IncomingMessage.call(this, socket);
  };
  AppRequest.prototype = request;
  // Node passes the response's options (highWaterMark, …) as a second argument its typings do not declare.
  const AppResponse = function ServerResponse(this: http.ServerResponse, req: http.IncomingMessage, options: unknown): void {
    Reflect.apply(http.ServerResponse, this, [req, options]);
  };
  AppResponse.prototype = response;
  const [IncomingMessage, ServerResponse]: unknown[] = [AppRequest, AppResponse];
  if (!constructs(IncomingMessage, http.IncomingMessage) || !constructs(ServerResponse, http.ServerResponse)) return undefined;
  try {
    const probe = new IncomingMessage(new net.Socket());
    const answer = new ServerResponse(probe);
    if (Object.getPrototypeOf(probe) !== request || Object.getPrototypeOf(answer) !== response) return undefined;
  } catch {
    return undefined;
  }
  // Node's statics (IncomingMessage.from, …) stay reachable, as on a subclass.
  Object.setPrototypeOf(IncomingMessage, http.IncomingMessage);
  Object.setPrototypeOf(ServerResponse, http.ServerResponse);
  return { IncomingMessage, ServerResponse };
}

/** Whether `made` is a function whose instances are instances of `base` (its prototype inherits from base's). */
function constructs<C extends abstract new (...args: never[]) => object>(made: unknown, base: C): made is C {
  return typeof made === 'function' && made.prototype instanceof base;
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

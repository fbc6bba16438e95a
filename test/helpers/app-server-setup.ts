import http from 'node:http';
import { createAppServer } from '../../src/lib/http-server';

/**
 * Every test reaches the app through the service's own HTTP server (issue 33). supertest's `request(app)` and
 * Express's `app.listen` make their server with `http.createServer(app)`; for an Express app, this makes it with
 * `createAppServer`, as src/server.ts does: the request and response objects are made with the app's prototypes,
 * and the server's timeouts and connection bookkeeping are the production ones. A plain request listener (a test's
 * fake receiver or provider) still gets Node's own server. Installed once per worker (jest's setupFilesAfterEnv runs
 * for every test file; `http` is the one core module of the worker).
 */
const INSTALLED = Symbol.for('service-sso.test.app-server');
const core: typeof http & { [INSTALLED]?: true } = http;

if (!core[INSTALLED]) {
  core[INSTALLED] = true;
  const nodeCreateServer = http.createServer;
  core.createServer = function createServer(...args: unknown[]) {
    const [app] = args;
    if (args.length === 1 && isExpressApp(app)) return createAppServer(app);
    return Reflect.apply(nodeCreateServer, http, args);
  } as typeof http.createServer;
}

function isExpressApp(value: unknown): value is Parameters<typeof createAppServer>[0] {
  return typeof value === 'function' && 'request' in value && 'response' in value && 'handle' in value && 'settings' in value;
}

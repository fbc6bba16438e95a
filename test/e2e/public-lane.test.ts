import http from 'node:http';
import { Writable } from 'node:stream';
import express from 'express';
import pino from 'pino';
import request from 'supertest';
import { createMetrics } from '../../src/middleware/metrics';
import { installPublicLane } from '../../src/middleware/public-lane';
import { laneRateLimit } from '../../src/middleware/rate-limit';
import { createAccessLog } from '../../src/middleware/request-log';
import { recordSecurityHeaders, securityHeaderOptions } from '../../src/middleware/security-headers';
import { declareRouter, reply, route } from '../../src/routes/route';
import { createOperatorMetrics } from '../../src/lib/metrics';
import { makeClient, makeSignedInUser } from '../helpers/factories';
import { issueOAuthTokens } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * The public lane (src/middleware/public-lane.ts): GET /health and the /.well-known documents are answered before
 * Express when the request is exactly `GET <path>`. Everything else reaches the same declared handler through Express.
 * Both ways must give the same answer: status, body and every header but the per-response ones.
 */
const lines: Array<Record<string, any>> = [];
let t: TestApp;
const METRICS_TOKEN = 'metrics-token-for-the-public-lane-test';

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      callback();
    },
  });
  t = await createTestApp({ logger: pino({ level: 'info', base: undefined }, sink), env: { METRICS_TOKEN } });
  // Every request the lane does not answer reaches Express's router: counting its calls tells the two ways apart.
  const router = t.app.router as unknown as { handle: (...args: unknown[]) => unknown };
  const handle = router.handle.bind(router);
  router.handle = (...args: unknown[]) => {
    expressCalls += 1;
    return handle(...args);
  };
});
let expressCalls = 0;
/** The requests `run` makes that Express's router served (the rest the lane answered). */
async function throughExpress(run: () => Promise<unknown>): Promise<number> {
  const before = expressCalls;
  await run();
  return expressCalls - before;
}
afterAll(() => t.close());

/** Every header except the ones that differ per response. */
function stableHeaders(res: request.Response): Record<string, string> {
  const { date: _date, 'x-request-id': _id, connection: _connection, 'keep-alive': _keepAlive, ...rest } = res.headers as Record<string, string>;
  return rest;
}

const LANE_PATHS = ['/health', '/.well-known/oauth-authorization-server', '/.well-known/openid-configuration'];

test.each(LANE_PATHS)('GET %s answers the same in the lane as through Express (status, body, headers)', async (path) => {
  const lane = await request(t.app).get(path);
  // A query string keeps a request out of the lane: Express routes it to the same handler.
  const viaExpress = await request(t.app).get(`${path}?via=express`);
  expect(lane.status).toBe(200);
  expect(lane.body).toEqual(viaExpress.body);
  expect(stableHeaders(lane)).toEqual(stableHeaders(viaExpress));
  expect(lane.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  expect(lane.headers['x-content-type-options']).toBe('nosniff');
  expect(lane.headers['x-powered-by']).toBeUndefined();
  expect(lane.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  expect(lane.headers['cache-control']).toBe(path === '/health' ? 'no-store' : 'public, max-age=300');
});

test('the lane keeps a sane incoming request id and logs a discovery request like Express does; /health is not logged', async () => {
  const res = await request(t.app).get('/.well-known/openid-configuration').set('X-Request-Id', 'lane-trace-0001');
  expect(res.headers['x-request-id']).toBe('lane-trace-0001');
  const logged = lines.filter((l) => l.req?.id === 'lane-trace-0001');
  expect(logged).toEqual([
    { level: 30, time: expect.any(Number), req: { id: 'lane-trace-0001', method: 'GET', path: '/.well-known/openid-configuration' }, res: { statusCode: 200 }, responseTime: expect.any(Number), msg: 'request completed' },
  ]);
  const health = await request(t.app).get('/health').set('X-Request-Id', 'lane-trace-0002');
  expect(health.headers['x-request-id']).toBe('lane-trace-0002');
  expect(lines.find((l) => l.req?.id === 'lane-trace-0002')).toBeUndefined();
});

test('lane answers are in the request histogram under the same route label as through Express', async () => {
  const count = async (route: string) => {
    const res = await request(t.app).get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`);
    const line = res.text.split('\n').find((l) => l.startsWith(`http_request_duration_seconds_count{method="GET",route="${route}",status="200"}`));
    return line ? Number(line.split(' ')[1]) : 0;
  };
  for (const path of LANE_PATHS) {
    const before = await count(path);
    await request(t.app).get(path).expect(200);
    await request(t.app).get(`${path}?via=express`).expect(200);
    expect(await count(path)).toBe(before + 2);
  }
});

test('HEAD, CORS, trailing-slash and case variants still reach the declared routes through Express', async () => {
  const origin = t.config.allowedOrigins[0];
  const head = await request(t.app).head('/.well-known/openid-configuration');
  expect(head.status).toBe(200);
  expect(head.headers['cache-control']).toBe('public, max-age=300');
  if (origin) {
    const cors = await request(t.app).get('/.well-known/openid-configuration').set('Origin', origin);
    expect(cors.status).toBe(200);
    expect(cors.headers['access-control-allow-origin']).toBe(origin);
  }
  const unlisted = await request(t.app).get('/health').set('Origin', 'https://unlisted.example');
  expect(unlisted.status).toBe(200);
  expect(unlisted.headers['access-control-allow-origin']).toBeUndefined();
  expect((await request(t.app).get('/health/')).body).toEqual({ status: 'OK' });
  expect((await request(t.app).get('/HEALTH')).body).toEqual({ status: 'OK' });
  // Not a lane path: the API copy of the discovery document stays behind the /api limiter.
  const api = await request(t.app).get('/api/oauth/.well-known/oauth-authorization-server');
  expect(api.status).toBe(200);
  expect(api.headers['ratelimit-policy'] ?? api.headers['ratelimit-limit'] ?? api.headers['x-ratelimit-limit']).toBeDefined();
});

describe('a lane route on its own app', () => {
  const build = (handler: () => unknown, decl: Partial<Parameters<typeof route>[0]> = {}) => {
    const operator = createOperatorMetrics();
    const metrics = createMetrics(operator);
    const logger = pino({ level: 'silent' });
    const app = express();
    const deps = { ctx: { config: { nodeEnv: 'production' } } } as never;
    app.use('/.well-known/doc', declareRouter(deps, [route({ method: 'get', path: '/', summary: 'doc', auth: 'none', lane: true, ...decl } as never, handler as never)]));
    app.use((err: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      res.status(500).json({ error: 'internal', message: err.message });
    });
    installPublicLane(app, { metrics, accessLog: createAccessLog(logger), securityHeaders: recordSecurityHeaders(securityHeaderOptions('http://localhost')) });
    return app;
  };

  test('a handler that throws reaches Express, which answers through its error handler', async () => {
    let calls = 0;
    const app = build(() => {
      calls += 1;
      throw new Error('boom');
    });
    const res = await request(app).get('/.well-known/doc');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: 'internal', message: 'boom' });
    expect(calls).toBe(2);
  });

  test('an answer JSON cannot write, or an impossible status, is left to Express: an error answer, not a crash', async () => {
    const bigint = await request(build(() => ({ n: BigInt(1) }))).get('/.well-known/doc');
    expect(bigint.status).toBe(500);
    expect(bigint.body.error).toBe('internal');
    const status = await request(build(() => reply(1000, { x: 1 }))).get('/.well-known/doc');
    expect(status.status).toBe(500);
  });

  test('a Reply status and body are sent as declared', async () => {
    const res = await request(build(() => reply(503, { status: 'unavailable' }), { noStore: true })).get('/.well-known/doc');
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ status: 'unavailable' });
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers.pragma).toBe('no-cache');
  });

  test('a declaration that reads the request cannot be a lane route', () => {
    expect(() => route({ method: 'get', path: '/', summary: 'x', auth: 'browser', lane: true } as never, () => null)).toThrow(/lane route/);
    expect(() => route({ method: 'get', path: '/', summary: 'x', auth: 'user', permission: 'users:read', lane: true } as never, () => null)).toThrow(/lane route/);
    expect(() => route({ method: 'get', path: '/:id', summary: 'x', auth: 'user', params: {} as never, lane: true } as never, () => null)).toThrow(/lane route/);
    expect(() => route({ method: 'post', path: '/', summary: 'x', auth: 'none', lane: true } as never, () => null)).toThrow(/lane route/);
    // A handler that would read req or res (possible when `lane` is not the literal true).
    expect(() => route({ method: 'get', path: '/', summary: 'x', auth: 'none', lane: true } as never, ((_input: unknown, _req: unknown) => null) as never)).toThrow(
      /takes no req or res/,
    );
  });

  test('noStore and cacheControl on one route are refused (two answers to one question)', () => {
    expect(() => route({ method: 'get', path: '/', summary: 'x', auth: 'none', noStore: true, cacheControl: 'public, max-age=60' }, () => null)).toThrow(/noStore and cacheControl/);
  });

  test('an authenticated lane route: the lane runs the limiter once and the live check, and Express only what the lane cannot answer', async () => {
    const calls = { limiter: 0, check: 0, expressAuth: 0, handler: [] as string[] };
    const principal = (clientId?: string) => ({ userId: 'u1', sessionId: 's1', email: 'a@b.test', firstName: 'A', lastName: 'B', isActive: true, emailVerified: true, roles: [], roleNames: [], permissions: [], amr: ['pwd'], clientId });
    const principals: Record<string, ReturnType<typeof principal>> = { first: principal(), client: principal('client-1') };
    const limiter = laneRateLimit((_req, _res, next) => {
      calls.limiter += 1;
      next();
    });
    const app = express();
    const deps = {
      ctx: { config: { nodeEnv: 'production' } },
      // The Express path's authenticate: 401 for everything (only the lane knows these tokens).
      authenticate: () => (_req: express.Request, res: express.Response) => {
        calls.expressAuth += 1;
        res.status(401).json({ error: 'unauthorized', message: 'via express' });
      },
    } as never;
    app.use('/api', limiter.middleware);
    app.use(
      '/api/me',
      declareRouter(deps, [
        route({ method: 'get', path: '/', summary: 'me', auth: 'user', lane: true }, ({ principal: p }) => {
          calls.handler.push(p.userId);
          return { id: p.userId };
        }),
      ]),
    );
    installPublicLane(app, {
      metrics: createMetrics(createOperatorMetrics()),
      accessLog: createAccessLog(pino({ level: 'silent' })),
      securityHeaders: recordSecurityHeaders(securityHeaderOptions('http://localhost')),
      api: {
        rateLimit: limiter,
        resolvePrincipal: async (token) => {
          calls.check += 1;
          return principals[token];
        },
        trustProxy: () => () => false,
      },
    });
    const ok = await request(app).get('/api/me').set('Authorization', 'Bearer first');
    expect([ok.status, ok.body]).toEqual([200, { id: 'u1' }]);
    expect(calls).toEqual({ limiter: 1, check: 1, expressAuth: 0, handler: ['u1'] });
    // A client token on a route with auth 'user', and an unknown token: Express answers, the limiter is not run again.
    for (const token of ['client', 'unknown']) {
      const res = await request(app).get('/api/me').set('Authorization', `Bearer ${token}`);
      expect([res.status, res.body.message]).toEqual([401, 'via express']);
    }
    expect(calls).toEqual({ limiter: 3, check: 3, expressAuth: 2, handler: ['u1'] });
  });

  /** An app with one authenticated lane route at /api/me, whose Express path answers through its own authenticate. */
  const buildAuthenticated = (options: { limit: express.RequestHandler; resolve: (token: string) => Promise<unknown>; logger?: pino.Logger }) => {
    const limiter = laneRateLimit(options.limit);
    const app = express();
    const deps = {
      ctx: { config: { nodeEnv: 'production' } },
      authenticate: () => async (req: express.Request, res: express.Response, next: express.NextFunction) => {
        const principal = await options.resolve(String(req.headers.authorization).slice(7));
        if (!principal) return res.status(401).json({ error: 'unauthorized', message: 'via express' });
        req.principal = principal as never;
        next();
      },
    } as never;
    app.use('/api', limiter.middleware);
    app.use('/api/me', declareRouter(deps, [route({ method: 'get', path: '/', summary: 'me', auth: 'user', lane: true }, ({ principal: p }) => ({ id: p.userId }))]));
    installPublicLane(app, {
      metrics: createMetrics(createOperatorMetrics()),
      accessLog: createAccessLog(options.logger ?? pino({ level: 'silent' })),
      securityHeaders: recordSecurityHeaders(securityHeaderOptions('http://localhost')),
      api: { rateLimit: limiter, resolvePrincipal: options.resolve as never, trustProxy: () => () => false },
    });
    return app;
  };

  test('a limiter that fails in the lane for another reason than a 429 leaves the request to Express, which runs it itself', async () => {
    let limiterCalls = 0;
    const app = buildAuthenticated({
      // Fails on a plain Node response (as express-rate-limit's draft-8 headers or default handler would), works in Express.
      limit: (_req, res, next) => {
        limiterCalls += 1;
        if (typeof (res as { append?: unknown }).append !== 'function') return next(new TypeError('response.append is not a function'));
        next();
      },
      resolve: async () => ({ userId: 'u1' }),
    });
    const res = await request(app).get('/api/me').set('Authorization', 'Bearer first');
    expect([res.status, res.body]).toEqual([200, { id: 'u1' }]);
    expect(limiterCalls).toBe(2);
  });

  test('a client that goes away while the lane waits gets the access-log line Express gives it, and no further work', async () => {
    const logged: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) logged.push(JSON.parse(line));
        callback();
      },
    });
    let release!: () => void;
    const checked = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const waiting = new Promise<void>((resolve) => (entered = resolve));
    let checks = 0;
    const app = buildAuthenticated({
      limit: (_req, _res, next) => next(),
      resolve: async () => {
        checks += 1;
        entered();
        await checked;
        return { userId: 'u1' };
      },
      logger: pino({ level: 'info', base: undefined }, sink),
    });
    const server = app.listen(0);
    // The server's side of the connection closing: the lane's request is then aborted.
    const socketClosed = new Promise<void>((resolve) => server.once('connection', (socket) => socket.once('close', () => resolve())));
    try {
      const port = (server.address() as import('node:net').AddressInfo).port;
      const client = http.get({ port, path: '/api/me', headers: { authorization: 'Bearer first', 'x-request-id': 'lane-aborted-0001' } });
      client.on('error', () => undefined);
      await waiting;
      client.destroy();
      await socketClosed;
      release();
      const line = () => logged.filter((l) => (l.req as { id?: string } | undefined)?.id === 'lane-aborted-0001');
      for (let turn = 0; turn < 100 && line().length === 0; turn++) await new Promise((resolve) => setImmediate(resolve));
      expect(line()).toEqual([
        { level: 40, time: expect.any(Number), req: { id: 'lane-aborted-0001', method: 'GET', path: '/api/me' }, res: { statusCode: 200 }, responseTime: expect.any(Number), msg: 'request aborted' },
      ]);
      expect(checks).toBe(1);
    } finally {
      server.close();
    }
  });

  test('an authenticated lane route outside /api is refused (it would escape the /api limiter)', () => {
    const app = express();
    const deps = { ctx: { config: { nodeEnv: 'production' } }, authenticate: () => () => undefined } as never;
    app.use('/.well-known/me', declareRouter(deps, [route({ method: 'get', path: '/', summary: 'me', auth: 'user', lane: true } as never, (() => ({})) as never)]));
    const metrics = createMetrics(createOperatorMetrics());
    expect(() =>
      installPublicLane(app, { metrics, accessLog: createAccessLog(pino({ level: 'silent' })), securityHeaders: recordSecurityHeaders(securityHeaderOptions('http://localhost')) }),
    ).toThrow(/under \/api/);
  });

  test.each(['/api/doc', '/api', '/metrics', '/doc'])('a lane route at %s is refused (only /health and /.well-known documents)', (mount) => {
    const app = express();
    const deps = { ctx: { config: { nodeEnv: 'production' } } } as never;
    app.use(mount, declareRouter(deps, [route({ method: 'get', path: '/', summary: 'doc', auth: 'none', lane: true } as never, (() => ({})) as never)]));
    const metrics = createMetrics(createOperatorMetrics());
    expect(() =>
      installPublicLane(app, { metrics, accessLog: createAccessLog(pino({ level: 'silent' })), securityHeaders: recordSecurityHeaders(securityHeaderOptions('http://localhost')) }),
    ).toThrow(/outside \/api/);
  });
});

/**
 * GET /api/auth/me takes the lane when it carries a Bearer token: the /api limiter and the live check run there, and
 * everything that is not a success is answered by Express, without counting the request twice.
 */
describe('the authenticated lane: GET /api/auth/me with a Bearer token', () => {
  /** The draft-7 RateLimit header's remaining count. */
  const remaining = (res: request.Response) => Number(/remaining=(\d+)/.exec(String(res.headers.ratelimit))?.[1]);
  /** Headers but the per-response ones, and the RateLimit header whose remaining count moves with every request. */
  const comparable = (res: request.Response) => {
    const { ratelimit: _ratelimit, ...rest } = stableHeaders(res);
    return rest;
  };

  test('answers the same as through Express: status, body and headers, the limiter headers included', async () => {
    const { bearer } = await makeSignedInUser(t, ['admin']);
    let lane!: request.Response;
    let viaExpress!: request.Response;
    expect(await throughExpress(async () => (lane = await request(t.app).get('/api/auth/me').set('Authorization', bearer)))).toBe(0);
    expect(await throughExpress(async () => (viaExpress = await request(t.app).get('/api/auth/me?via=express').set('Authorization', bearer)))).toBe(1);
    expect(lane.status).toBe(200);
    expect(lane.body.user.roles).toEqual(['admin']);
    expect(lane.body).toEqual(viaExpress.body);
    expect(comparable(lane)).toEqual(comparable(viaExpress));
    expect(lane.headers['ratelimit-policy']).toBeDefined();
    expect(lane.headers.ratelimit).toMatch(/^limit=\d+, remaining=\d+, reset=\d+$/);
    expect(lane.headers['x-content-type-options']).toBe('nosniff');
    expect(lane.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('the lane counts every request once in the /api limiter, also those it hands to Express', async () => {
    const { bearer } = await makeSignedInUser(t);
    const seen: number[] = [];
    const steps: Array<() => request.Test> = [
      () => request(t.app).get('/api/auth/me').set('Authorization', bearer), // lane, 200
      () => request(t.app).get('/api/auth/me').set('Authorization', 'Bearer not-a-token'), // lane, handed over: 401
      () => request(t.app).get('/api/auth/me?via=express').set('Authorization', bearer), // Express, 200
      () => request(t.app).get('/api/auth/me').set('Authorization', bearer), // lane, 200
    ];
    for (const step of steps) seen.push(remaining(await step()));
    expect(seen.every(Number.isFinite)).toBe(true);
    expect(seen.map((n, i) => (i === 0 ? 0 : seen[i - 1]! - n))).toEqual([0, 1, 1, 1]);
  });

  test('a revoked session, an unknown token and no token answer 401 in the contract shape, logged and counted as through Express', async () => {
    const { bearer, accessToken } = await makeSignedInUser(t);
    await request(t.app).post('/api/auth/logout').set('Authorization', bearer).expect(200);
    const revoked = await request(t.app).get('/api/auth/me').set('Authorization', bearer).set('X-Request-Id', 'lane-revoked-0001');
    expect(revoked.status).toBe(401);
    expect(revoked.body).toEqual({ error: 'unauthorized', message: 'Invalid or expired access token' });
    const viaExpress = await request(t.app).get('/api/auth/me?via=express').set('Authorization', bearer);
    expect(comparable(revoked)).toEqual(comparable(viaExpress));
    expect(lines.filter((l) => l.req?.id === 'lane-revoked-0001')).toEqual([
      { level: 30, time: expect.any(Number), req: { id: 'lane-revoked-0001', method: 'GET', path: '/api/auth/me' }, res: { statusCode: 401 }, responseTime: expect.any(Number), msg: 'request completed' },
    ]);
    expect((await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${accessToken}x`)).status).toBe(401);
    expect((await request(t.app).get('/api/auth/me')).body).toEqual({ error: 'unauthorized', message: 'Authentication required' });
  });

  test('an OAuth client token sees only what its scope allows, in the lane as through Express', async () => {
    const { agent } = await makeSignedInUser(t);
    const client = await makeClient(t, { scopes: ['openid', 'email'] });
    const tokens = await issueOAuthTokens(t, agent, client, { scope: 'openid email' });
    let lane!: request.Response;
    expect(await throughExpress(async () => (lane = await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${tokens.access_token}`)))).toBe(0);
    const viaExpress = await request(t.app).get('/api/auth/me?via=express').set('Authorization', `Bearer ${tokens.access_token}`);
    expect(lane.status).toBe(200);
    expect(Object.keys(lane.body.user).sort()).toEqual(['email', 'email_verified', 'id', 'is_active']);
    expect(lane.body).toEqual(viaExpress.body);
  });

  test('a role change and a deactivation show on the very next lane request', async () => {
    const { user, bearer } = await makeSignedInUser(t);
    const me = () => request(t.app).get('/api/auth/me').set('Authorization', bearer);
    expect(await throughExpress(async () => expect((await me()).body.user.roles).toEqual([]))).toBe(0);
    const role = await t.db('roles').where({ name: 'admin' }).whereNull('application').first();
    await t.db('user_roles').insert({ user_id: user.id, role_id: role.id });
    expect(await throughExpress(async () => expect((await me()).body.user.roles).toEqual(['admin']))).toBe(0);
    await t.db('users').where({ id: user.id }).update({ is_active: false });
    // Refused in the lane's live check, then answered by Express (the contract's 401).
    expect(await throughExpress(async () => expect((await me()).status).toBe(401))).toBe(1);
  });

  test('cookie sessions, CORS requests, HEAD and requests with a body go through Express to the same route', async () => {
    const { bearer, agent } = await makeSignedInUser(t);
    const cookie = await agent.get('/api/auth/me');
    expect(cookie.status).toBe(200);
    const origin = t.config.allowedOrigins[0]!;
    const cors = await request(t.app).get('/api/auth/me').set('Authorization', bearer).set('Origin', origin);
    expect(cors.status).toBe(200);
    expect(cors.headers['access-control-allow-origin']).toBe(origin);
    expect(cors.body).toEqual(cookie.body);
    // Express's JSON parser reads a GET's body too: a malformed one is its 400, never ignored by the lane.
    const malformed = await request(t.app).get('/api/auth/me').set('Authorization', bearer).set('Content-Type', 'application/json').send('{"x":');
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toBe('validation_error');
    // Even an empty body: the parsers check its type and charset (415 for one they cannot read).
    const charset = await request(t.app).get('/api/auth/me').set('Authorization', bearer).set('Content-Type', 'application/json; charset=foo').set('Content-Length', '0');
    const charsetViaExpress = await request(t.app).get('/api/auth/me?via=express').set('Authorization', bearer).set('Content-Type', 'application/json; charset=foo').set('Content-Length', '0');
    expect(charset.status).toBe(415);
    expect(charset.body).toEqual(charsetViaExpress.body);
    expect((await request(t.app).head('/api/auth/me').set('Authorization', bearer)).status).toBe(200);
  });

  test('behind a trusted proxy the lane keys the limiter on the client address from X-Forwarded-For, as Express does', async () => {
    const proxied = await createTestApp({ env: { TRUST_PROXY: '1', RATE_LIMIT_MAX: '50' } });
    try {
      const { bearer } = await makeSignedInUser(proxied);
      const me = (client: string, query = '') => request(proxied.app).get(`/api/auth/me${query}`).set('Authorization', bearer).set('X-Forwarded-For', client);
      const [a1, b1, a2, a3] = [await me('203.0.113.7'), await me('198.51.100.9'), await me('203.0.113.7', '?via=express'), await me('203.0.113.7')];
      expect([a1, b1, a2, a3].map((r) => r.status)).toEqual([200, 200, 200, 200]);
      // One bucket per client address, shared by the lane and Express.
      expect([remaining(a1), remaining(b1), remaining(a2), remaining(a3)]).toEqual([49, 49, 48, 47]);
    } finally {
      await proxied.close();
    }
  });

  test('over the limit the lane hands the request to Express: 429 rate_limited with Retry-After, counted once', async () => {
    const limited = await createTestApp({ env: { RATE_LIMIT_MAX: '3' } });
    try {
      const user = await makeSignedInUser(limited);
      // Signing in used one of the three.
      expect(remaining(await request(limited.app).get('/api/auth/me').set('Authorization', user.bearer).expect(200))).toBe(1);
      expect(remaining(await request(limited.app).get('/api/auth/me').set('Authorization', user.bearer).expect(200))).toBe(0);
      const res = await request(limited.app).get('/api/auth/me').set('Authorization', user.bearer);
      expect(res.status).toBe(429);
      expect(res.body).toEqual({ error: 'rate_limited', message: 'Too many requests, slow down' });
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(res.headers['ratelimit-policy']).toBe(`3;w=${limited.config.rateLimitWindowMs / 1000}`);
    } finally {
      await limited.close();
    }
  });

  test('lane answers are in the request histogram under the route label of the Express path', async () => {
    const { bearer } = await makeSignedInUser(t);
    const count = async () => {
      const res = await request(t.app).get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`);
      const line = res.text.split('\n').find((l) => l.startsWith('http_request_duration_seconds_count{method="GET",route="/api/auth/me",status="200"}'));
      return line ? Number(line.split(' ')[1]) : 0;
    };
    const before = await count();
    await request(t.app).get('/api/auth/me').set('Authorization', bearer).expect(200);
    await request(t.app).get('/api/auth/me?via=express').set('Authorization', bearer).expect(200);
    expect(await count()).toBe(before + 2);
  });
});

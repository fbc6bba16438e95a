import { Writable } from 'node:stream';
import express from 'express';
import pino from 'pino';
import request from 'supertest';
import { createMetrics } from '../../src/middleware/metrics';
import { installPublicLane } from '../../src/middleware/public-lane';
import { createAccessLog } from '../../src/middleware/request-log';
import { recordSecurityHeaders, securityHeaderOptions } from '../../src/middleware/security-headers';
import { declareRouter, reply, route } from '../../src/routes/route';
import { createOperatorMetrics } from '../../src/lib/metrics';
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
});
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
    expect(() => route({ method: 'get', path: '/', summary: 'x', auth: 'user', lane: true } as never, () => null)).toThrow(/lane route/);
    expect(() => route({ method: 'post', path: '/', summary: 'x', auth: 'none', lane: true } as never, () => null)).toThrow(/lane route/);
    // A handler that would read req or res (possible when `lane` is not the literal true).
    expect(() => route({ method: 'get', path: '/', summary: 'x', auth: 'none', lane: true } as never, ((_input: unknown, _req: unknown) => null) as never)).toThrow(
      /takes no req or res/,
    );
  });

  test('noStore and cacheControl on one route are refused (two answers to one question)', () => {
    expect(() => route({ method: 'get', path: '/', summary: 'x', auth: 'none', noStore: true, cacheControl: 'public, max-age=60' }, () => null)).toThrow(/noStore and cacheControl/);
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

import { Writable } from 'node:stream';
import express, { type RequestHandler } from 'express';
import pino from 'pino';
import request from 'supertest';
import { z } from 'zod';
import { createScopes } from '../../src/app';
import { installPipeline } from '../../src/http/pipeline';
import { AppError } from '../../src/errors';
import { mountRoutes, type Scopes } from '../../src/routes';
import { declareRouter, route } from '../../src/routes/route';
import { makeUser, signIn } from '../helpers/factories';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * One request pipeline (issue 22): every request goes through Express, through the global steps and then the steps of
 * the one scope its route is mounted in (src/app.ts, src/routes/scope.ts). There is no second way to answer a route,
 * so a global step added once reaches the busiest routes too, and what a scope adds reaches every route mounted there.
 */
const lines: Array<Record<string, any>> = [];
let t: TestApp;
const METRICS_TOKEN = 'metrics-token-for-the-pipeline-test';
const origin = 'https://portal.test';

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      callback();
    },
  });
  t = await createTestApp({
    logger: pino({ level: 'info', base: undefined }, sink),
    env: { METRICS_TOKEN, MFA_REQUIRED_FOR_ADMINS: 'true' },
  });
});
afterAll(() => t.close());

/**
 * An app of the test's own: `before` as global steps, the service's scopes and routes, and `extra` mounted in them, on
 * the app's one pipeline as createApp builds it (src/http/pipeline.ts).
 */
function buildApp(before: RequestHandler[], extra?: (scopes: Scopes) => void) {
  const app = express();
  installPipeline(app);
  app.set('query parser', 'simple');
  for (const step of before) app.use(step);
  const { scopes, finish } = createScopes(app, { ctx: t.ctx });
  extra?.(scopes);
  mountRoutes(scopes);
  finish();
  return app;
}

const remaining = (res: request.Response) => Number(/remaining=(\d+)/.exec(String(res.headers['ratelimit']))?.[1]);

describe('a global step added once reaches every route', () => {
  test('a maintenance flag answers /health, discovery, /api/auth/me (Bearer), the token endpoint and the pages alike', async () => {
    const { accessToken } = await signIn(t, await makeUser(t));
    let maintenance = false;
    const flag: RequestHandler = (_req, _res, next) =>
      next(maintenance ? new AppError('service_unavailable', 'Down for maintenance') : undefined);
    const app = buildApp([flag]);
    const paths = ['/health', '/.well-known/openid-configuration', '/api/oauth/.well-known/oauth-authorization-server', '/login'];
    // The control: without the flag, the same app answers.
    for (const path of paths) expect({ path, status: (await request(app).get(path)).status }).toEqual({ path, status: 200 });
    expect((await request(app).get('/api/auth/me').set('Authorization', `Bearer ${accessToken}`)).status).toBe(200);

    maintenance = true;
    for (const path of paths) expect({ path, status: (await request(app).get(path)).status }).toEqual({ path, status: 503 });
    const me = await request(app).get('/api/auth/me').set('Authorization', `Bearer ${accessToken}`);
    expect(me.status).toBe(503);
    expect(me.body.error).toBe('service_unavailable');
    expect((await request(app).post('/api/oauth/token').type('form').send({ grant_type: 'refresh_token' })).status).toBe(503);
  });
});

describe('the scopes', () => {
  test('/api/auth/me is never cached, and the limiter counts each /api request once (a 404 under /api included)', async () => {
    const { accessToken } = await signIn(t, await makeUser(t));
    const first = await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${accessToken}`);
    expect(first.status).toBe(200);
    expect(first.headers['cache-control']).toBe('no-store');
    expect(first.headers.pragma).toBe('no-cache');
    const second = await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${accessToken}`);
    expect(remaining(second)).toBe(remaining(first) - 1);
    const missing = await request(t.app).get('/api/no-such-route');
    expect(missing.status).toBe(404);
    expect(remaining(missing)).toBe(remaining(second) - 1);
    // Documents outside /api are outside its limiter; the spec's discovery path under /api is inside it (spec §8).
    expect((await request(t.app).get('/health')).headers['ratelimit']).toBeUndefined();
    expect((await request(t.app).get('/api/oauth/.well-known/oauth-authorization-server')).headers['ratelimit']).toBeDefined();
    // Static files under /api (the documentation page's assets) too.
    const asset = await request(t.app).get('/api/docs/assets/swagger-ui.css');
    expect(asset.status).toBe(200);
    expect(asset.headers['ratelimit']).toBeDefined();
  });

  test('discovery documents and the JWKS answer any origin with `*`, never with credentials (CONTRACT §18)', async () => {
    for (const path of [
      '/.well-known/oauth-authorization-server',
      '/.well-known/openid-configuration',
      '/api/oauth/.well-known/oauth-authorization-server',
      '/api/oauth/.well-known/openid-configuration',
      '/api/oauth/jwks',
    ]) {
      const res = await request(t.app).get(path).set('Origin', 'https://any-spa.example');
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      const preflight = await request(t.app)
        .options(path)
        .set('Origin', 'https://any-spa.example')
        .set('Access-Control-Request-Method', 'GET');
      expect(preflight.status).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe('*');
      expect(preflight.headers['access-control-allow-credentials']).toBeUndefined();
    }
  });

  test('the discovery documents are the same bytes with an ETag: If-None-Match answers 304 without a body, HEAD the headers', async () => {
    for (const path of [
      '/.well-known/oauth-authorization-server',
      '/.well-known/openid-configuration',
      '/api/oauth/.well-known/oauth-authorization-server',
      '/api/oauth/.well-known/openid-configuration',
    ]) {
      const first = await request(t.app).get(path);
      expect(first.status).toBe(200);
      expect(first.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(first.body.issuer).toBe(t.ctx.config.baseUrl);
      expect(Number(first.headers['content-length'])).toBe(Buffer.byteLength(first.text));
      const etag = first.headers.etag as string;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
      const again = await request(t.app).get(path);
      expect({ etag: again.headers.etag, text: again.text }).toEqual({ etag, text: first.text });

      const revalidated = await request(t.app).get(path).set('If-None-Match', `"other", W/${etag}`);
      expect(revalidated.status).toBe(304);
      expect(revalidated.text).toBe('');
      expect(revalidated.headers.etag).toBe(etag);
      expect(revalidated.headers['cache-control']).toBe('public, max-age=300');
      expect((await request(t.app).get(path).set('If-None-Match', '"other"')).status).toBe(200);

      const head = await request(t.app).head(path);
      expect(head.status).toBe(200);
      expect(head.headers['content-length']).toBe(first.headers['content-length']);
      expect(head.text).toBeUndefined();
    }
  });

  test('the documents carry the global steps: security headers, request id, Cache-Control; /health CORS for listed origins only', async () => {
    for (const path of ['/health', '/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const res = await request(t.app).get(path).set('Origin', origin);
      expect(res.status).toBe(200);
      expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['x-powered-by']).toBeUndefined();
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.headers['cache-control']).toBe(path === '/health' ? 'no-store' : 'public, max-age=300');
      expect(res.headers['access-control-allow-origin']).toBe(path === '/health' ? origin : '*');
      const unlisted = await request(t.app).get(path).set('Origin', 'https://unlisted.example');
      expect(unlisted.headers['access-control-allow-origin']).toBe(path === '/health' ? undefined : '*');
    }
  });

  test('the access log has one line per request (not for /health), and the histogram labels routes by their declared path', async () => {
    const res = await request(t.app).get('/.well-known/openid-configuration').set('X-Request-Id', 'pipeline-trace-0001');
    expect(res.headers['x-request-id']).toBe('pipeline-trace-0001');
    expect(lines.filter((l) => l.req?.id === 'pipeline-trace-0001')).toEqual([
      expect.objectContaining({
        req: { id: 'pipeline-trace-0001', method: 'GET', path: '/.well-known/openid-configuration' },
        res: { statusCode: 200 },
        msg: 'request completed',
      }),
    ]);
    await request(t.app).get('/health').set('X-Request-Id', 'pipeline-trace-0002');
    expect(lines.find((l) => l.req?.id === 'pipeline-trace-0002')).toBeUndefined();

    const { accessToken } = await signIn(t, await makeUser(t));
    await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${accessToken}`).expect(200);
    await request(t.app).get('/api/users/not-a-uuid').set('Authorization', `Bearer ${accessToken}`);
    // Read twice: the first read is recorded when it ends, after its text was made.
    await request(t.app).get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`);
    const metrics = (await request(t.app).get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`)).text;
    for (const label of ['/health', '/.well-known/openid-configuration', '/api/auth/me', '/api/users/:userId', '/metrics']) {
      expect(metrics).toContain(`route="${label}"`);
    }
    expect(metrics).not.toContain('not-a-uuid');
  });

  test('issue 19: no CORS headers on /api/oauth/logout for any origin, preflight included (the API keeps them)', async () => {
    const logout = await request(t.app).get('/api/oauth/logout').set('Origin', origin);
    expect(logout.headers['access-control-allow-origin']).toBeUndefined();
    expect(logout.headers['access-control-allow-credentials']).toBeUndefined();
    const post = await request(t.app).post('/api/oauth/logout').set('Origin', origin).type('form').send({});
    expect(post.headers['access-control-allow-origin']).toBeUndefined();
    const preflight = await request(t.app).options('/api/oauth/logout').set('Origin', origin).set('Access-Control-Request-Method', 'POST');
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    const api = await request(t.app).options('/api/auth/me').set('Origin', origin).set('Access-Control-Request-Method', 'GET');
    expect(api.headers['access-control-allow-origin']).toBe(origin);
  });
});

describe('what a scope adds reaches a route mounted there without it declaring anything', () => {
  const widget = (path: string) =>
    route(
      {
        method: 'get',
        path,
        summary: 'A new route',
        auth: 'user',
        admin: true,
        response: { description: 'ok', schema: z.object({ ok: z.literal(true) }) },
      },
      () => ({
        ok: true as const,
      }),
    );
  const failing = route({ method: 'post', path: '/fail', summary: 'fails', auth: 'none' }, () => {
    throw new AppError('conflict', 'Nope');
  });

  test('issue 19: a new route under /api/admin is under MFA_REQUIRED_FOR_ADMINS; the same route in the plain API scope is not', async () => {
    const app = buildApp([], (scopes) => {
      scopes.administration.mount('/admin/widgets', (deps) => declareRouter(deps, [widget('/')]));
      scopes.api.mount('/widgets', (deps) => declareRouter(deps, [widget('/')]));
    });
    const { accessToken } = await signIn(t, await makeUser(t, { roles: ['admin'] }));
    const admin = await request(app).get('/api/admin/widgets').set('Authorization', `Bearer ${accessToken}`);
    expect(admin.status).toBe(403);
    expect(admin.body.error).toBe('mfa_required');
    const plain = await request(app).get('/api/widgets').set('Authorization', `Bearer ${accessToken}`);
    expect(plain.status).toBe(200);
  });

  test("a route in the OAuth protocol scope answers in RFC 6749's dialect, its steps' errors included", async () => {
    const app = buildApp([], (scopes) => {
      scopes.oauthProtocol.mount('/oauth-extra', (deps) => declareRouter(deps, [failing]));
      scopes.api.mount('/extra', (deps) => declareRouter(deps, [failing]));
    });
    const oauth = await request(app).post('/api/oauth-extra/fail');
    expect(oauth.status).toBe(409);
    expect(oauth.body).toEqual({ error: 'invalid_request', error_description: 'Nope' });
    expect(oauth.headers['cache-control']).toBe('no-store');
    // A body parser's error, raised by a step of the scope before the route.
    const malformed = await request(app).post('/api/oauth-extra/fail').set('Content-Type', 'application/json').send('{');
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toBe('invalid_request');
    const contract = await request(app).post('/api/extra/fail');
    expect(contract.body).toEqual({ error: 'conflict', message: 'Nope' });
  });
});

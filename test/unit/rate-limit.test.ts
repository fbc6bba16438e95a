import express, { type ErrorRequestHandler } from 'express';
import { rateLimit, type Store } from 'express-rate-limit';
import request from 'supertest';
import { AppError } from '../../src/errors';
import { createRateLimit, WindowCounters } from '../../src/middleware/rate-limit';

/**
 * The per-IP limiter (issue 33 replaced express-rate-limit on the hot path with a synchronous count): the same
 * headers, the same fixed window per key, 429 rate_limited with Retry-After, and a failing store lets requests
 * through. The headers are compared with what express-rate-limit 8 answers for the same configuration.
 */
function appWith(limiter: express.RequestHandler) {
  const app = express();
  app.use(limiter);
  app.get('/x', (_req, res) => {
    res.json({ ok: true });
  });
  const errors: ErrorRequestHandler = (err, _req, res, _next) => {
    const e = err as AppError;
    res
      .status(e.status ?? 500)
      .set(e.headers ?? {})
      .json({ error: e.code });
  };
  app.use(errors);
  return app;
}

const config = { rateLimitWindowMs: 15 * 60_000, rateLimitMax: 3 };

test('headers and statuses as express-rate-limit 8 answers them (draft-7), request by request', async () => {
  const ours = appWith(createRateLimit(config));
  const theirs = appWith(
    rateLimit({ windowMs: config.rateLimitWindowMs, limit: config.rateLimitMax, standardHeaders: 'draft-7', legacyHeaders: false }),
  );
  // The seconds to the window's reset count down in real time from each limiter's first request: on a loaded machine
  // the two may tick at different requests, so each is compared within the seconds the test has taken so far.
  const started = Date.now();
  const elapsed = () => Math.ceil((Date.now() - started) / 1000);
  const fields = (header: unknown) => {
    const m = /^limit=(\d+), remaining=(\d+), reset=(\d+)$/.exec(String(header));
    if (!m) throw new Error(`not a RateLimit header: ${String(header)}`);
    return { limit: Number(m[1]), remaining: Number(m[2]), reset: Number(m[3]) };
  };
  for (let i = 0; i < 5; i++) {
    const [a, b] = [await request(ours).get('/x'), await request(theirs).get('/x')];
    expect(a.headers['ratelimit-policy']).toBe(b.headers['ratelimit-policy']);
    const [x, y] = [fields(a.headers['ratelimit']), fields(b.headers['ratelimit'])];
    expect({ limit: x.limit, remaining: x.remaining }).toEqual({ limit: y.limit, remaining: y.remaining });
    expect(Math.abs(x.reset - y.reset)).toBeLessThanOrEqual(elapsed());
    expect(x.reset).toBeLessThanOrEqual(900);
    expect(x.reset).toBeGreaterThanOrEqual(900 - elapsed());
    expect(a.status).toBe(b.status);
  }
  const refused = await request(ours).get('/x');
  expect(refused.status).toBe(429);
  expect(refused.body.error).toBe('rate_limited');
  const left = fields(refused.headers['ratelimit']);
  expect({ limit: left.limit, remaining: left.remaining }).toEqual({ limit: 3, remaining: 0 });
  expect(left.reset).toBeGreaterThanOrEqual(900 - elapsed());
  expect(left.reset).toBeLessThanOrEqual(900);
  expect(refused.headers['retry-after']).toBe(String(left.reset));
});

test('the window is fixed per key from its first hit; keys count apart; a quiet key is dropped after two windows', () => {
  const counters = new WindowCounters(1000);
  expect(counters.increment('a', 10_000)).toEqual({ hits: 1, resetAt: 11_000 });
  expect(counters.increment('a', 10_500)).toEqual({ hits: 2, resetAt: 11_000 });
  expect(counters.increment('b', 10_600)).toEqual({ hits: 1, resetAt: 11_600 });
  expect(counters.increment('a', 10_999)).toEqual({ hits: 3, resetAt: 11_000 });
  expect(counters.increment('a', 11_000)).toEqual({ hits: 1, resetAt: 12_000 });
});

test('an asynchronous store (Redis) is awaited; a store that fails lets the request through', async () => {
  const hits = new Map<string, number>();
  const store: Store = {
    init: () => undefined,
    increment: async (key) => {
      hits.set(key, (hits.get(key) ?? 0) + 1);
      return { totalHits: hits.get(key)!, resetTime: new Date(Date.now() + 60_000) };
    },
    decrement: async () => undefined,
    resetKey: async () => undefined,
  };
  const app = appWith(createRateLimit({ rateLimitWindowMs: 60_000, rateLimitMax: 1 }, store));
  expect((await request(app).get('/x')).headers['ratelimit']).toBe('limit=1, remaining=0, reset=60');
  const refused = await request(app).get('/x');
  expect(refused.status).toBe(429);
  expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(59);

  const broken: Store = { ...store, increment: async () => Promise.reject(new Error('redis down')) };
  const open = appWith(createRateLimit({ rateLimitWindowMs: 60_000, rateLimitMax: 1 }, broken));
  for (let i = 0; i < 3; i++) expect((await request(open).get('/x')).status).toBe(200);
});

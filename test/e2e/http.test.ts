import net from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import request from 'supertest';
import { createApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { createDb } from '../../src/db';
import { createRateLimit, createRedisRateLimitStore } from '../../src/middleware/rate-limit';
import { closeServiceContext, createServiceContext } from '../../src/create-context';
import { makeUser, signIn, uniqueEmail } from '../helpers/factories';
import { createCapturingMailer, createTestApp, TEST_ENV, type TestApp } from '../helpers/test-app';

/**
 * Explicit jest timeout of the tests where the database is unreachable or hangs. They assert no elapsed time (speed is
 * `npm run bench`'s business; the 2 s /health guarantee is proved on a fake clock in test/unit/health-probe.test.ts):
 * a request that hangs instead of answering 503 fails them through this timeout.
 */
const DB_DOWN_TEST_TIMEOUT_MS = 10_000;

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('GET /health', () => {
  test('200 {status:"OK"} when the database answers', async () => {
    const res = await request(t.app).get('/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'OK' });
  });

  test(
    '503 when the database is unreachable',
    async () => {
      const config = loadConfig({ ...TEST_ENV, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere' });
      const ctx = createServiceContext(config, { mailer: createCapturingMailer([]) });
      try {
        const app = createApp({ ctx });
        const res = await request(app).get('/health');
        expect(res.status).toBe(503);
        expect(res.body.status).not.toBe('OK');
        // and an API call that needs the database is a 503 in the contract shape, not a 500
        const login = await request(app).post('/api/auth/login').send({ email: 'a@b.test', password: 'whatever' });
        expect(login.status).toBe(503);
        expect(login.body.error).toBe('service_unavailable');
      } finally {
        await closeServiceContext(ctx);
      }
    },
    DB_DOWN_TEST_TIMEOUT_MS,
  );
});

test(
  'GET /health answers 503 when the database hangs (accepts the connection, never answers)',
  async () => {
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((socket) => {
      sockets.add(socket);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    const config = loadConfig({ ...TEST_ENV, DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/hang` });
    const ctx = createServiceContext(config, { mailer: createCapturingMailer([]), logger: pino({ level: 'silent' }) });
    try {
      const res = await request(createApp({ ctx })).get('/health');
      expect(res.status).toBe(503);
      expect(res.body.status).not.toBe('OK');
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
      await closeServiceContext(ctx);
    }
  },
  DB_DOWN_TEST_TIMEOUT_MS,
);

test(
  'a database that accepts connections and never answers them: API calls answer 503 with Retry-After, not 500',
  async () => {
    // pg gives up a connect after its connection timeout with a bare Error('timeout expired'): on a loaded machine a
    // burst that opens many new connections at once meets it (issue 33, the 5xx soak).
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((socket) => {
      sockets.add(socket);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    const config = loadConfig({ ...TEST_ENV, DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/hang` });
    const ctx = createServiceContext(config, { mailer: createCapturingMailer([]), logger: pino({ level: 'silent' }) });
    try {
      const app = createApp({ ctx });
      const login = await request(app).post('/api/auth/login').send({ email: 'a@b.test', password: 'whatever' });
      expect(login.status).toBe(503);
      expect(login.body.error).toBe('service_unavailable');
      expect(login.headers['retry-after']).toBe('5');
      const token = await request(app)
        .post('/api/oauth/token')
        .type('form')
        .send({ grant_type: 'client_credentials', client_id: 'c', client_secret: 's' });
      expect(token.status).toBe(503);
      expect(token.body.error).toBe('temporarily_unavailable');
      expect(token.headers['retry-after']).toBe('5');
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
      await closeServiceContext(ctx);
    }
  },
  DB_DOWN_TEST_TIMEOUT_MS,
);

describe('database failure during refresh', () => {
  test('answers 503, burns nothing and does not sign the user out', async () => {
    const user = await makeUser(t);
    const { refreshToken } = await signIn(t, user);
    const config = loadConfig({ ...TEST_ENV, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere' });
    const ctx = createServiceContext(config, { mailer: createCapturingMailer([]) });
    try {
      const down = await request(createApp({ ctx })).post('/api/auth/refresh-token').send({ refreshToken });
      expect(down.status).toBe(503);
      expect(down.body.error).toBe('service_unavailable');
      expect(down.headers['set-cookie']).toBeUndefined();
    } finally {
      await closeServiceContext(ctx);
    }
    await request(t.app).post('/api/auth/refresh-token').send({ refreshToken }).expect(200);
  });
});

describe('CORS', () => {
  test('an allow-listed origin gets CORS headers with credentials', async () => {
    const res = await request(t.app).get('/health').set('Origin', 'https://portal.test');
    expect(res.headers['access-control-allow-origin']).toBe('https://portal.test');
    expect(res.headers['access-control-allow-credentials']).toBe('true');
  });

  test('preflight from an allow-listed origin succeeds', async () => {
    const res = await request(t.app)
      .options('/api/auth/me')
      .set('Origin', 'https://portal.test')
      .set('Access-Control-Request-Method', 'GET');
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('https://portal.test');
  });

  test('an unlisted origin gets no CORS headers', async () => {
    const res = await request(t.app).get('/health').set('Origin', 'https://evil.test');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });

  test('no Origin (curl, servers) is allowed', async () => {
    const user = await makeUser(t);
    await request(t.app).post('/api/auth/login').send({ email: user.email, password: user.password }).expect(200);
  });
});

describe('cross-site cookie requests (CSRF)', () => {
  test('a state-changing cookie request from a foreign Origin is refused with 403', async () => {
    const user = await makeUser(t);
    const { agent, accessToken } = await signIn(t, user);
    const res = await agent.post('/api/auth/logout').set('Origin', 'https://evil.test');
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('forbidden');
    // the session survived
    await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${accessToken}`).expect(200);
  });

  test('refresh-token by cookie from a foreign Origin is refused', async () => {
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    await agent.post('/api/auth/refresh-token').set('Origin', 'https://evil.test').expect(403);
  });

  test('the same request from BASE_URL or an allowed origin passes', async () => {
    const user = await makeUser(t);
    const a = await signIn(t, user);
    await a.agent.put('/api/auth/me').set('Origin', 'http://sso.test').send({ first_name: 'A' }).expect(200);
    await a.agent.post('/api/auth/logout').set('Origin', 'https://portal.test').expect(200);
  });

  test('a Bearer request from any origin is not a CSRF risk and passes', async () => {
    const user = await makeUser(t);
    const { accessToken } = await signIn(t, user);
    await request(t.app)
      .post('/api/auth/logout')
      .set('Origin', 'https://evil.test')
      .set('Authorization', `Bearer ${accessToken}`)
      .expect(200);
  });

  test('GET with cookies from a foreign origin is not state-changing and passes', async () => {
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    await agent.get('/api/auth/me').set('Origin', 'https://evil.test').expect(200);
  });
});

describe('request bodies', () => {
  test('malformed JSON -> 400 validation_error', async () => {
    const res = await request(t.app).post('/api/auth/login').set('Content-Type', 'application/json').send('{"email": ');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'validation_error', message: 'Malformed JSON body' });
  });

  test('a body over 100 kB -> 413 payload_too_large', async () => {
    const res = await request(t.app)
      .post('/api/auth/register')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ first_name: 'x'.repeat(110_000), last_name: 'y', email: uniqueEmail(), password: 'secret1' }));
    expect(res.status).toBe(413);
    expect(res.body.error).toBe('payload_too_large');
  });

  test('a JSON array or string body is a 400, not a 500', async () => {
    for (const body of ['[]', '"text"', 'null', '42']) {
      const res = await request(t.app).post('/api/auth/login').set('Content-Type', 'application/json').send(body);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('validation_error');
    }
  });

  test('responses never carry a stack trace', async () => {
    const res = await request(t.app).post('/api/auth/login').set('Content-Type', 'application/json').send('{bad');
    expect(JSON.stringify(res.body)).not.toMatch(/at .*\.(ts|js):\d+/);
  });
});

describe('misc HTTP behaviour', () => {
  test('unknown route -> 404 not_found in the contract shape', async () => {
    const res = await request(t.app).get('/api/nope');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not_found', message: expect.any(String) });
  });

  test('a request id is returned, and a sane incoming one is kept', async () => {
    const res = await request(t.app).get('/health').set('X-Request-Id', 'abc12345-trace');
    expect(res.headers['x-request-id']).toBe('abc12345-trace');
    const generated = await request(t.app).get('/health').set('X-Request-Id', 'bad id with spaces');
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('security headers are set (helmet, frame-ancestors none)', async () => {
    const res = await request(t.app).get('/health');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(res.headers['x-powered-by']).toBeUndefined();
  });
});

describe('rate limiting on /api/*', () => {
  test('over the limit -> 429 rate_limited with Retry-After; /health is not limited', async () => {
    const limited = await createTestApp({ env: { RATE_LIMIT_MAX: '3' } });
    try {
      for (let i = 0; i < 3; i++) await request(limited.app).get('/api/auth/me').expect(401);
      const res = await request(limited.app).get('/api/auth/me');
      expect(res.status).toBe(429);
      expect(res.body.error).toBe('rate_limited');
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      await request(limited.app).get('/health').expect(200);
    } finally {
      await limited.close();
    }
  });

  test('with Redis the counters are shared between two app instances', async () => {
    const logger = pino({ level: 'silent' });
    const prefix = `sso:test:${Date.now()}:${Math.random()}:`;
    const a = await createRedisRateLimitStore(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', logger, prefix);
    const b = await createRedisRateLimitStore(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', logger, prefix);
    const config = { rateLimitWindowMs: 60_000, rateLimitMax: 4 };
    const one = await createTestApp({ rateLimit: createRateLimit(config, a.store) });
    const two = await createTestApp({ rateLimit: createRateLimit(config, b.store) });
    try {
      for (let i = 0; i < 2; i++) await request(one.app).get('/api/auth/me').expect(401);
      for (let i = 0; i < 2; i++) await request(two.app).get('/api/auth/me').expect(401);
      const res = await request(one.app).get('/api/auth/me');
      expect(res.status).toBe(429);
      expect(res.body.error).toBe('rate_limited');
    } finally {
      await one.close();
      await two.close();
      await a.close();
      await b.close();
    }
  });
});

describe('per-address login throttle', () => {
  /**
   * Signs in to a locked address and checks the 429 against the stored lock, which must last exactly `lockSeconds` from
   * the failure that set it (locked_until and updated_at come from the same clock reading). Retry-After counts down to
   * the lock's end from the server's clock at some instant between sending the request and reading the answer, so it
   * is checked against that bracket: no elapsed time is assumed, however slow the machine.
   */
  async function expectLockedFor(email: string, password: string, lockSeconds: number): Promise<void> {
    const sentAt = t.clock.now().getTime();
    const res = await request(t.app).post('/api/auth/login').send({ email, password });
    const answeredAt = t.clock.now().getTime();
    expect(res.status).toBe(429);
    expect(res.body.error).toBe('too_many_attempts');
    const row = await t.db('login_failures').where({ email }).first();
    const lockedUntil = new Date(row.locked_until).getTime();
    expect(lockedUntil - new Date(row.updated_at).getTime()).toBe(lockSeconds * 1000);
    const retryAfter = Number(res.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(Math.max(1, Math.ceil((lockedUntil - answeredAt) / 1000)));
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil((lockedUntil - sentAt) / 1000));
    expect(retryAfter).toBeLessThanOrEqual(lockSeconds);
  }

  test('10 failures lock the address for 1 minute, even for the right password; success resets', async () => {
    const user = await makeUser(t);
    for (let i = 0; i < 10; i++) {
      const res = await request(t.app)
        .post('/api/auth/login')
        .send({ email: user.email, password: `wrong-${i}` });
      expect(res.status).toBe(401);
    }
    await expectLockedFor(user.email, user.password, 60);

    t.clock.advance(61);
    await request(t.app).post('/api/auth/login').send({ email: user.email, password: user.password }).expect(200);
    // the counter was reset: one more failure does not lock
    await request(t.app).post('/api/auth/login').send({ email: user.email, password: 'wrong' }).expect(401);
    await request(t.app).post('/api/auth/login').send({ email: user.email, password: user.password }).expect(200);
  });

  test('the lock doubles with each further failure', async () => {
    const user = await makeUser(t);
    for (let i = 0; i < 10; i++) await request(t.app).post('/api/auth/login').send({ email: user.email, password: 'nope' });
    t.clock.advance(61);
    await request(t.app).post('/api/auth/login').send({ email: user.email, password: 'nope' }).expect(401);
    await expectLockedFor(user.email, user.password, 120);
  });

  test('unknown addresses are throttled the same way (no account oracle)', async () => {
    const email = uniqueEmail('ghost');
    for (let i = 0; i < 10; i++) {
      await request(t.app).post('/api/auth/login').send({ email, password: 'nope' }).expect(401);
    }
    const res = await request(t.app).post('/api/auth/login').send({ email, password: 'nope' });
    expect(res.status).toBe(429);
    expect(res.body.error).toBe('too_many_attempts');
  });

  test('parallel guesses cannot slip past the limit', async () => {
    const user = await makeUser(t);
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        request(t.app)
          .post('/api/auth/login')
          .send({ email: user.email, password: `g${i}` }),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20);
  });
});

describe('logs', () => {
  test('never contain passwords, tokens or cookies', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(chunk.toString());
        cb();
      },
    });
    const logger = pino({ level: 'trace' }, sink);
    const logged = await createTestApp({ logger });
    try {
      const password = 'very-secret-password-42';
      const email = uniqueEmail('logged');
      const reg = await request(logged.app).post('/api/auth/register').send({ first_name: 'L', last_name: 'G', email, password });
      const login = await request(logged.app).post('/api/auth/login').send({ email, password });
      const cookies = login.headers['set-cookie'] as unknown as string[];
      await request(logged.app)
        .get('/api/auth/me')
        .set('Cookie', cookies.map((c) => c.split(';')[0]).join('; '));
      await request(logged.app).post('/api/auth/refresh-token').send({ refreshToken: login.body.refreshToken });
      await request(logged.app).get('/api/auth/me').set('Authorization', `Bearer ${reg.body.accessToken}`);
      await request(logged.app).post('/api/auth/login').send({ email, password: 'wrong-password-123' });
      const text = lines.join('');
      expect(lines.length).toBeGreaterThan(3);
      for (const secret of [
        password,
        'wrong-password-123',
        reg.body.accessToken,
        reg.body.refreshToken,
        login.body.accessToken,
        login.body.refreshToken,
      ]) {
        expect(text).not.toContain(secret);
      }
      expect(text).not.toMatch(/eyJhbGci/);
    } finally {
      await logged.close();
    }
  });
});

describe('createDb', () => {
  test(
    'an unreachable database fails instead of hanging: the driver gets a timeout of at most 2 s, the pool queue at most 5 s',
    async () => {
      const db = createDb({ databaseUrl: 'postgres://postgres@127.0.0.1:1/x' }, { logger: pino({ level: 'silent' }) });
      // Records the settings every pg.Client this Knex instance opens is given: what the driver really gets, whatever
      // shape createDb's configuration has. Only this instance's driver is wrapped, not the shared `pg` module.
      const pg = db.client.driver as typeof import('pg');
      const clientSettings: import('pg').ClientConfig[] = [];
      class RecordingClient extends pg.Client {
        constructor(config: import('pg').ClientConfig) {
          super(config);
          clientSettings.push(config);
        }
      }
      db.client.driver = Object.create(pg, { Client: { value: RecordingClient } });
      try {
        await expect(db.raw('select 1')).rejects.toBeDefined();
        // A server that accepts the connection and never answers is given up on after pg's connection timeout, and a
        // query waiting for a pooled connection after the pool's acquire timeout (0 would mean: wait forever).
        expect(clientSettings.length).toBeGreaterThan(0);
        for (const settings of clientSettings) {
          expect(settings.connectionTimeoutMillis).toBeGreaterThan(0);
          expect(settings.connectionTimeoutMillis).toBeLessThanOrEqual(2000);
        }
        // The pool's queue (a burst waiting for busy connections) may wait a little longer, never forever.
        const pool = db.client.pool as { acquireTimeoutMillis: number };
        expect(pool.acquireTimeoutMillis).toBeGreaterThan(0);
        expect(pool.acquireTimeoutMillis).toBeLessThanOrEqual(5000);
      } finally {
        await db.destroy();
      }
    },
    DB_DOWN_TEST_TIMEOUT_MS,
  );
});

describe('GET /metrics', () => {
  test('404 when METRICS_TOKEN is unset', async () => {
    await request(t.app).get('/metrics').expect(404);
  });

  test('requires the token; with it, Prometheus text labelled by route pattern', async () => {
    const token = 'metrics-token-0123456789';
    const withMetrics = await createTestApp({ env: { METRICS_TOKEN: token } });
    try {
      await request(withMetrics.app).get('/metrics').expect(401);
      await request(withMetrics.app).get('/metrics').set('Authorization', 'Bearer wrong-token-000000000').expect(401);
      await request(withMetrics.app).get('/api/auth/me').expect(401);
      const res = await request(withMetrics.app).get('/metrics').set('Authorization', `Bearer ${token}`);
      expect(res.status).toBe(200);
      expect(res.text).toContain('http_request_duration_seconds_count{method="GET",route="/api/auth/me",status="401"} 1');
      expect(res.text).toContain('process_cpu_user_seconds_total');
    } finally {
      await withMetrics.close();
    }
  });
});

describe('referrer policy', () => {
  test('same-origin everywhere, so our own form posts keep a real Origin and nothing leaks to other sites', async () => {
    for (const path of ['/health', '/login', '/set-password?token=x', '/api/auth/me']) {
      const res = await request(t.app).get(path);
      expect(res.headers['referrer-policy']).toBe('same-origin');
    }
  });

  test('plain-http deployments are not told to upgrade requests', async () => {
    const res = await request(t.app).get('/login');
    expect(res.headers['content-security-policy']).not.toContain('upgrade-insecure-requests');
  });
});

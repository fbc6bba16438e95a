import { randomBytes, randomUUID } from 'node:crypto';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { createAppServer, REQUEST_TIMEOUT_MS } from '../../src/lib/http-server';
import { makeClient, makeSignedInUser, makeUser } from '../helpers/factories';
import { createTestApp, type TestApp } from '../helpers/test-app';

const METRICS_TOKEN = 'metrics-token-0123456789';
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { METRICS_TOKEN } });
});
afterAll(async () => {
  await t.close();
});
const api = () => request(t.app);

describe('bad transport input is a 4xx, never a 5xx (CONTRACT §8)', () => {
  test.each([
    ['get', '/api/users/%E0%A4%A'],
    ['get', '/api/users/%'],
    ['delete', '/api/auth/sessions/%ZZ'],
    ['get', '/api/rbac/roles/%C0%AF'],
    ['put', '/api/admin/oauth-clients/%FF'],
  ])('%s %s (malformed percent-escape in a path parameter) -> 400 validation_error', async (method, path) => {
    const { bearer } = await makeSignedInUser(t, ['super_admin']);
    const res = await (api() as unknown as Record<string, (p: string) => request.Test>)[method]!(path)
      .set('Authorization', bearer)
      .send({});
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'validation_error', message: expect.any(String) });
    expect(JSON.stringify(res.body)).not.toMatch(/URIError|at \w+ \(/);
  });

  test('more than 1000 form parameters -> 413 payload_too_large', async () => {
    const body = Array.from({ length: 1001 }, (_, i) => `p${i}=x`).join('&');
    const res = await api().post('/api/oauth/token').type('form').send(body);
    expect(res.status).toBe(413);
    // The token endpoint speaks the OAuth dialect; elsewhere the contract's code.
    expect(res.body.error).toBe('invalid_request');
    const form = await api().post('/api/auth/login').type('form').send(body);
    expect(form.status).toBe(413);
    expect(form.body.error).toBe('payload_too_large');
  });

  test('more than 1000 query parameters -> 400; 1000 are fine', async () => {
    const query = (n: number) => Array.from({ length: n }, (_, i) => `q${i}=x`).join('&');
    const res = await api().get(`/api/auth/login-target?${query(1001)}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
    expect((await api().get(`/api/oauth/.well-known/oauth-authorization-server?${query(1000)}`)).status).toBe(200);
  });

  test('the per-address throttle cannot overflow however many failures pile up', async () => {
    const user = await makeUser(t);
    for (const failures of [1100, 2_147_483_000]) {
      await t
        .db('login_failures')
        .insert({ email: user.email, failures, locked_until: null, updated_at: t.clock.now() })
        .onConflict('email')
        .merge();
      const res = await api().post('/api/auth/login').send({ email: user.email, password: 'wrong-password' });
      expect(res.status).toBe(401);
      const row = await t.db('login_failures').where({ email: user.email }).first();
      // The lock stays at its 15-minute maximum, counted from the failure that set it (one clock reading stamps both).
      const lockSeconds = (new Date(row.locked_until).getTime() - new Date(row.updated_at).getTime()) / 1000;
      expect(lockSeconds).toBe(900);
      const locked = await api().post('/api/auth/login').send({ email: user.email, password: user.password });
      expect(locked.status).toBe(429);
    }
  });
});

describe('metrics labels are route patterns, bounded whatever the traffic (CONTRACT §8)', () => {
  const scrape = async () => (await api().get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`).expect(200)).text;
  const seriesOf = (text: string) => text.split('\n').filter((l) => l.startsWith('http_request_duration_seconds_count{'));

  test('thousands of requests to random ids and random paths add no series', async () => {
    // Unauthenticated: the route matches (and is labelled) before its guard answers 401. One listening server for
    // the whole burst (supertest would start one per request).
    const server = t.app.listen(0, '127.0.0.1');
    const agent = request(server);
    const burst = async (n: number) => {
      for (let i = 0; i < n; i += 50) {
        await Promise.all(
          Array.from({ length: 50 }, (_, j) => {
            const k = i + j;
            if (k % 3 === 0) return agent.get(`/api/users/${randomUUID()}`);
            if (k % 3 === 1) return agent.delete(`/api/auth/sessions/${randomBytes(6).toString('hex')}`);
            return agent.get(`/no/such/${randomBytes(8).toString('hex')}`);
          }),
        );
      }
    };
    await burst(150);
    await scrape(); // the scrape itself is a request with its own series
    const before = seriesOf(await scrape());
    await burst(1850);
    const after = seriesOf(await scrape());
    server.close();
    expect(after.map((l) => l.replace(/ \d+$/, ''))).toEqual(before.map((l) => l.replace(/ \d+$/, '')));
    expect(after.some((l) => l.includes('route="/api/users/:userId"'))).toBe(true);
    expect(after.some((l) => l.includes('route="/api/auth/sessions/:sessionId"'))).toBe(true);
    expect(after.some((l) => l.includes('route="unmatched"'))).toBe(true);
    expect(after.join('\n')).not.toMatch(/no\/such|[0-9a-f]{8}-[0-9a-f]{4}/);
  }, 90_000);
});

describe('CORS never on the authorization endpoints or HTML pages (RFC 9700 §2.6, CONTRACT §8)', () => {
  const origin = 'https://portal.test';
  test.each([
    '/api/oauth/authorize',
    '/API/OAuth/Authorize',
    '/api/auth/authorize',
    '/login',
    '/consent',
    '/verify-email',
    '/set-password',
    '/forgot-password',
    '/api/docs',
  ])('GET and OPTIONS %s from an allowed origin carry no CORS headers', async (path) => {
    const get = await api().get(path).set('Origin', origin);
    expect(get.headers['access-control-allow-origin']).toBeUndefined();
    expect(get.headers['access-control-allow-credentials']).toBeUndefined();
    const preflight = await api().options(path).set('Origin', origin).set('Access-Control-Request-Method', 'GET');
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
  });

  test('the JSON API keeps CORS for allowed origins (the control)', async () => {
    const res = await api().get('/api/auth/me').set('Origin', origin);
    expect(res.headers['access-control-allow-origin']).toBe(origin);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    const approve = await api().options('/api/oauth/authorize/approve').set('Origin', origin).set('Access-Control-Request-Method', 'POST');
    expect(approve.headers['access-control-allow-origin']).toBe(origin);
  });
});

describe('redirect URIs (CONTRACT §8)', () => {
  const create = (app: TestApp, redirectUri: string) =>
    makeSignedInUser(app, ['super_admin']).then(({ bearer }) =>
      request(app.app)
        .post('/api/admin/oauth-clients')
        .set('Authorization', bearer)
        .send({ name: 'App', redirect_uri: redirectUri, scopes: 'openid' }),
    );

  test('http://[::1] is a loopback host like localhost and 127.0.0.1; other plain http is refused by default', async () => {
    expect((await create(t, 'http://[::1]:8123/callback')).status).toBe(201);
    const internal = await create(t, 'http://intranet.example/callback');
    expect(internal.status).toBe(400);
    expect(internal.body.error).toBe('validation_error');
  });

  test('ALLOW_HTTP_REDIRECT_URIS=true admits plain http for internal deployments (every other rule stays)', async () => {
    const internal = await createTestApp({ env: { ALLOW_HTTP_REDIRECT_URIS: 'true' } });
    try {
      expect((await create(internal, 'http://intranet.example/callback')).status).toBe(201);
      expect((await create(internal, 'http://intranet.example/callback#frag')).status).toBe(400);
      expect((await create(internal, 'http://user@intranet.example/callback')).status).toBe(400);
    } finally {
      await internal.close();
    }
  });
});

describe('slow clients and hosted forms (CONTRACT §8)', () => {
  test('headers that do not arrive in time: the connection is answered 408 or closed', async () => {
    expect(REQUEST_TIMEOUT_MS).toBe(30_000);
    const production = createAppServer(t.app);
    expect(production.requestTimeout).toBe(30_000);
    expect(production.headersTimeout).toBe(30_000);

    const server = createAppServer(t.app, { requestTimeoutMs: 1000, checkIntervalMs: 200 });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const socket = net.connect(port, '127.0.0.1');
      socket.write('POST /api/auth/login HTTP/1.1\r\nHost: sso.test\r\n');
      // No elapsed time is asserted: a server that never gives up on the client fails this test through its timeout.
      const answer = await new Promise<string>((resolve) => {
        let data = '';
        socket.on('data', (chunk) => (data += chunk.toString()));
        socket.on('close', () => resolve(data));
      });
      expect(answer === '' || answer.startsWith('HTTP/1.1 408')).toBe(true);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }, 10_000);

  test('hosted form posts spend the per-IP budget of /api/*; revoke answers 200 application/json {}', async () => {
    const limited = await createTestApp({ env: { RATE_LIMIT_MAX: '3' } });
    try {
      const client = await makeClient(limited);
      const revoke = await request(limited.app)
        .post('/api/oauth/revoke')
        .auth(client.clientId, client.clientSecret)
        .type('form')
        .send({ token: 'not-a-token' });
      expect(revoke.status).toBe(200);
      expect(revoke.headers['content-type']).toMatch(/^application\/json/);
      expect(revoke.body).toEqual({});
      for (let i = 0; i < 2; i++) await request(limited.app).get('/api/oauth/.well-known/oauth-authorization-server').expect(200);
      for (const path of ['/login', '/forgot-password', '/set-password', '/verify-email', '/consent']) {
        const res = await request(limited.app).post(path).type('form').send({ email: 'a@b.test' });
        expect({ path, status: res.status }).toEqual({ path, status: 429 });
      }
      // Reading a page is not limited.
      expect((await request(limited.app).get('/login')).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});

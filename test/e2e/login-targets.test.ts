import request from 'supertest';
import { sha256Hex } from '../../src/lib/crypto';
import { createTestApp, type TestApp } from '../helpers/test-app';

// TEST_ENV: LOGIN_APPS = { portal: https://portal.test, admin: https://admin.test }, default app portal.
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const OFF_SITE: Array<Record<string, string>> = [
  { redirect_to: '//evil.test' },
  { path: '//evil.test' },
  { path: '/\\evil.test' },
  { path: '%2F%2Fevil.test' },
  { path: '/%2F%2Fevil.test' },
  { path: '/%5Cevil.test' },
  { redirect_to: 'https://portal.test.evil.test' },
  { redirect_to: 'https://portal.test@evil.test' },
  { redirect_to: 'javascript:alert(1)' },
  { path: 'javascript:alert(1)' },
  { redirect_to: ' https://portal.test/' },
  { path: ' /dashboard' },
  { redirect_to: '\thttps://portal.test/' },
  { redirect_to: 'https://portal.test/\r\nLocation: https://evil.test' },
  { redirect_to: 'https:\\\\evil.test' },
  { redirect_to: 'https://portal.test\\@evil.test' },
  { path: 'dashboard' },
  { path: '' },
  { app: 'evil' },
  { app: '__proto__' },
  { redirect_to: 'https://evil.test/' },
  { redirect_to: 'http://portal.test/' },
];

describe('GET /api/auth/login-target', () => {
  test.each([
    [{ app: 'admin' }, 'https://admin.test/'],
    [{ app: 'admin', path: '/users?page=2' }, 'https://admin.test/users?page=2'],
    [{ path: '/dashboard' }, 'https://portal.test/dashboard'],
    [{ redirect_to: 'https://portal.test/inbox?x=1' }, 'https://portal.test/inbox?x=1'],
  ])('%p -> %s', async (query, url) => {
    const res = await request(t.app).get('/api/auth/login-target').query(query);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ url });
  });

  test.each(OFF_SITE.map((q) => [JSON.stringify(q), q] as const))('off-site %s -> 400 invalid_target', async (_name, query) => {
    const res = await request(t.app).get('/api/auth/login-target').query(query);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_target');
    expect(typeof res.body.message).toBe('string');
  });

  test('repeated parameters -> 400 invalid_target', async () => {
    const res = await request(t.app).get('/api/auth/login-target?app=portal&app=admin');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_target');
  });
});

describe('POST /api/auth/login-request and /login-resolve', () => {
  test('mints a single-use token bound to the destination, stored hashed', async () => {
    const res = await request(t.app).post('/api/auth/login-request').send({ app: 'admin', path: '/settings' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ login_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), expires_in: 300 });
    expect(res.headers['cache-control']).toBe('no-store');
    const row = await t
      .db('login_tokens')
      .where({ token_hash: sha256Hex(res.body.login_token) })
      .first();
    expect(row).toMatchObject({ url: 'https://admin.test/settings', used_at: null });
    expect(new Date(row.expires_at).getTime() - new Date(row.created_at).getTime()).toBe(300_000);
    expect(await t.db('login_tokens').where({ token_hash: res.body.login_token }).first()).toBeUndefined();

    const first = await request(t.app).post('/api/auth/login-resolve').send({ login_token: res.body.login_token });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ url: 'https://admin.test/settings' });
    const second = await request(t.app).post('/api/auth/login-resolve').send({ login_token: res.body.login_token });
    expect(second.status).toBe(400);
    expect(second.body.error).toBe('validation_error');
  });

  test('redirect_to works the same way', async () => {
    const res = await request(t.app).post('/api/auth/login-request').send({ redirect_to: 'https://portal.test/x?y=1' });
    const resolved = await request(t.app).post('/api/auth/login-resolve').send({ login_token: res.body.login_token });
    expect(resolved.body).toEqual({ url: 'https://portal.test/x?y=1' });
  });

  test.each(OFF_SITE.map((q) => [JSON.stringify(q), q] as const))(
    'off-site %s -> 400 invalid_target, nothing stored',
    async (_name, body) => {
      const before = await t.db('login_tokens').count({ n: '*' });
      const res = await request(t.app).post('/api/auth/login-request').send(body);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_target');
      expect(await t.db('login_tokens').count({ n: '*' })).toEqual(before);
    },
  );

  test('non-string destinations in JSON -> 400 invalid_target', async () => {
    for (const body of [{ app: ['portal'] }, { path: 5 }, { redirect_to: { href: 'https://portal.test' } }]) {
      const res = await request(t.app).post('/api/auth/login-request').send(body);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_target');
    }
  });

  test('of 20 concurrent resolves of one token exactly one gets the URL', async () => {
    const { body } = await request(t.app).post('/api/auth/login-request').send({ path: '/race' });
    const results = await Promise.all(
      Array.from({ length: 20 }, () => request(t.app).post('/api/auth/login-resolve').send({ login_token: body.login_token })),
    );
    const winners = results.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    expect(winners[0]!.body).toEqual({ url: 'https://portal.test/race' });
    expect(results.filter((r) => r.status === 400)).toHaveLength(19);
  });

  test('a token expires after 5 minutes', async () => {
    const fresh = await request(t.app).post('/api/auth/login-request').send({ app: 'portal' });
    const stale = await request(t.app).post('/api/auth/login-request').send({ app: 'portal' });
    // The clock is real time plus an offset: 10 s under the 5 minutes leaves room for a slow request.
    t.clock.advance(290);
    expect((await request(t.app).post('/api/auth/login-resolve').send({ login_token: fresh.body.login_token })).status).toBe(200);
    t.clock.advance(11);
    const res = await request(t.app).post('/api/auth/login-resolve').send({ login_token: stale.body.login_token });
    expect(res.status).toBe(400);
  });

  test('unknown, empty or missing tokens -> 400', async () => {
    for (const body of [{ login_token: 'x'.repeat(43) }, { login_token: '' }, {}, { login_token: 7 }]) {
      const res = await request(t.app).post('/api/auth/login-resolve').send(body);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('validation_error');
    }
  });
});

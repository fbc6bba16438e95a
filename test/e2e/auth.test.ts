import jwt from 'jsonwebtoken';
import request from 'supertest';
import { DEFAULT_PASSWORD, grantRole, makeUser, signIn, uniqueEmail } from '../helpers/factories';
import { createTestApp, TEST_ENV, type TestApp } from '../helpers/test-app';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const validRegistration = () => ({
  first_name: 'Ada',
  last_name: 'Lovelace',
  email: uniqueEmail('ada'),
  password: 'secret1',
});

function cookieHeader(res: request.Response, name: string): string | undefined {
  const cookies = (res.headers['set-cookie'] as unknown as string[] | undefined) ?? [];
  return cookies.find((c) => c.startsWith(`${name}=`));
}

describe('POST /api/auth/register', () => {
  test('creates the user, returns tokens and sets both SSO cookies', async () => {
    const body = validRegistration();
    const res = await request(t.app)
      .post('/api/auth/register')
      .send({ ...body, email: body.email.toUpperCase() });
    expect(res.status).toBe(201);
    expect(res.body.user).toEqual({
      id: expect.any(String),
      email: body.email,
      name: 'Ada Lovelace',
      first_name: 'Ada',
      last_name: 'Lovelace',
      roles: [],
      permissions: [],
      adminRole: 'user',
      is_active: true,
      email_verified: false,
    });
    expect(typeof res.body.accessToken).toBe('string');
    expect(typeof res.body.refreshToken).toBe('string');

    const access = cookieHeader(res, 'accessToken')!;
    const refresh = cookieHeader(res, 'refreshToken')!;
    expect(access).toMatch(/Max-Age=3600/);
    expect(refresh).toMatch(/Max-Age=604800/);
    for (const c of [access, refresh]) {
      expect(c).toMatch(/Path=\//);
      expect(c).toMatch(/HttpOnly/);
      expect(c).toMatch(/SameSite=Lax/);
      expect(c).not.toMatch(/Secure/);
    }

    const row = await t.db('users').where({ email: body.email }).first();
    expect(row.password_hash).toMatch(/^\$2[aby]\$/);
    expect(row.password_hash).not.toContain(body.password);
    expect(await t.db('sessions').where({ user_id: row.id }).count('* as n').first()).toEqual({ n: '1' });
  });

  test('sends a verification email with a link to this server', async () => {
    const body = validRegistration();
    t.mails.length = 0;
    await request(t.app).post('/api/auth/register').send(body).expect(201);
    expect(t.mails).toHaveLength(1);
    expect(t.mails[0]!.to).toBe(body.email);
    expect(t.mails[0]!.text).toMatch(/http:\/\/sso\.test\/verify-email\?token=[A-Za-z0-9_-]{43}/);
  });

  test('the same email in another case is a 409 conflict and changes nothing', async () => {
    const body = validRegistration();
    await request(t.app).post('/api/auth/register').send(body).expect(201);
    const res = await request(t.app)
      .post('/api/auth/register')
      .send({ ...body, email: `  ${body.email.toUpperCase()} `, password: 'another-password' });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'conflict', message: expect.any(String) });
    const login = await request(t.app).post('/api/auth/login').send({ email: body.email, password: body.password });
    expect(login.status).toBe(200);
  });

  test.each([
    ['short password', { password: '12345' }, 'password'],
    ['three emoji are three characters, not six', { password: '\u{1F600}\u{1F600}\u{1F600}' }, 'password'],
    ['73-byte password', { password: 'a'.repeat(73) }, 'password'],
    ['multi-byte password over 72 bytes', { password: 'é'.repeat(37) }, 'password'],
    ['bad email', { email: 'not-an-email' }, 'email'],
    ['missing first_name', { first_name: undefined }, 'first_name'],
    ['missing last_name', { last_name: undefined }, 'last_name'],
    ['missing email', { email: undefined }, 'email'],
    ['missing password', { password: undefined }, 'password'],
    ['non-string password', { password: 1234567 }, 'password'],
  ])('%s -> 400 validation_error naming the field', async (_label, patch, field) => {
    const res = await request(t.app)
      .post('/api/auth/register')
      .send({ ...validRegistration(), ...patch });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
    expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path: field })]));
  });

  test('a 72-byte password is accepted and works for login', async () => {
    const body = { ...validRegistration(), password: 'b'.repeat(72) };
    await request(t.app).post('/api/auth/register').send(body).expect(201);
    await request(t.app).post('/api/auth/login').send({ email: body.email, password: body.password }).expect(200);
  });
});

describe('POST /api/auth/login', () => {
  test('returns the user with live roles, tokens and cookies', async () => {
    const user = await makeUser(t, { roles: ['manager'] });
    const res = await request(t.app).post('/api/auth/login').send({ email: user.email.toUpperCase(), password: user.password });
    expect(res.status).toBe(200);
    expect(res.body.user).toMatchObject({
      id: user.id,
      email: user.email,
      roles: ['manager'],
      permissions: ['users:read', 'users:write'],
      adminRole: 'manager',
    });
    expect(cookieHeader(res, 'accessToken')).toBeDefined();
    expect(cookieHeader(res, 'refreshToken')).toBeDefined();
    const row = await t.db('users').where({ id: user.id }).first();
    expect(row.last_login_at).not.toBeNull();
  });

  test('unknown email, wrong password and inactive user get the identical 401', async () => {
    const active = await makeUser(t);
    const inactive = await makeUser(t, { isActive: false });
    const attempts = [
      { email: uniqueEmail('nobody'), password: DEFAULT_PASSWORD },
      { email: active.email, password: 'wrong-password' },
      { email: inactive.email, password: inactive.password },
    ];
    const responses = [];
    for (const a of attempts) responses.push(await request(t.app).post('/api/auth/login').send(a));
    for (const res of responses) {
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'invalid_credentials', message: 'Invalid email or password' });
      expect(cookieHeader(res, 'accessToken')).toBeUndefined();
    }
  });

  test('an unknown email still spends one password comparison (no timing oracle)', async () => {
    const spy = jest.spyOn(t.ctx.passwords, 'verify');
    try {
      await request(t.app)
        .post('/api/auth/login')
        .send({ email: uniqueEmail('ghost'), password: 'whatever1' })
        .expect(401);
      expect(spy).toHaveBeenCalledTimes(1);
      expect(spy.mock.calls[0]![1]).toBeUndefined();
    } finally {
      spy.mockRestore();
    }
  });

  test('a user without a password (invited) cannot sign in', async () => {
    const user = await makeUser(t);
    await t.db('users').where({ id: user.id }).update({ password_hash: null });
    const res = await request(t.app).post('/api/auth/login').send({ email: user.email, password: user.password });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_credentials');
  });

  test('missing fields -> 400 validation_error', async () => {
    const res = await request(t.app).post('/api/auth/login').send({ email: 'a@b.test' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
  });
});

describe('GET/PUT /api/auth/me', () => {
  test('works with the cookie and with the Bearer header', async () => {
    const user = await makeUser(t);
    const { agent, accessToken } = await signIn(t, user);
    const viaCookie = await agent.get('/api/auth/me');
    expect(viaCookie.status).toBe(200);
    expect(viaCookie.body.user.id).toBe(user.id);
    const viaBearer = await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${accessToken}`);
    expect(viaBearer.status).toBe(200);
    expect(viaBearer.body.user.email).toBe(user.email);
  });

  test('no token -> 401 unauthorized', async () => {
    const res = await request(t.app).get('/api/auth/me');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'unauthorized', message: expect.any(String) });
  });

  test('PUT updates the name and the next GET shows it', async () => {
    const user = await makeUser(t);
    const { accessToken } = await signIn(t, user);
    const res = await request(t.app)
      .put('/api/auth/me')
      .set('Authorization', `Bearer ${accessToken}`)
      .send({ first_name: ' Grace ', last_name: 'Hopper' });
    expect(res.status).toBe(200);
    expect(res.body.user).toMatchObject({ first_name: 'Grace', last_name: 'Hopper', name: 'Grace Hopper' });
    const me = await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${accessToken}`);
    expect(me.body.user.name).toBe('Grace Hopper');
  });

  test('PUT with nothing to change or an empty name -> 400', async () => {
    const user = await makeUser(t);
    const { accessToken } = await signIn(t, user);
    for (const body of [{}, { first_name: '' }, { last_name: 'x'.repeat(101) }]) {
      const res = await request(t.app).put('/api/auth/me').set('Authorization', `Bearer ${accessToken}`).send(body);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('validation_error');
    }
  });

  test('PUT cannot change email or roles', async () => {
    const user = await makeUser(t);
    const { accessToken } = await signIn(t, user);
    await request(t.app)
      .put('/api/auth/me')
      .set('Authorization', `Bearer ${accessToken}`)
      .send({ first_name: 'X', email: 'evil@example.test', roles: ['super_admin'] })
      .expect(200);
    const row = await t.db('users').where({ id: user.id }).first();
    expect(row.email).toBe(user.email);
    expect(await t.db('user_roles').where({ user_id: user.id })).toHaveLength(0);
  });
});

describe('tokens', () => {
  test('access and refresh JWTs carry the spec claims and lifetimes', async () => {
    const user = await makeUser(t, { roles: ['admin'], firstName: 'Alan', lastName: 'Turing' });
    const { accessToken, refreshToken } = await signIn(t, user);
    const access = jwt.verify(accessToken, TEST_ENV.JWT_ACCESS_SECRET!, { algorithms: ['HS256'] }) as jwt.JwtPayload;
    expect(jwt.decode(accessToken, { complete: true })!.header.alg).toBe('HS256');
    expect(access).toMatchObject({
      userId: user.id,
      email: user.email,
      name: 'Alan Turing',
      roles: ['admin'],
      iss: 'service-sso',
      aud: 'service',
      sid: expect.any(String),
      jti: expect.any(String),
    });
    expect(access.exp! - access.iat!).toBe(24 * 3600);
    const refresh = jwt.verify(refreshToken, TEST_ENV.JWT_REFRESH_SECRET!, { algorithms: ['HS256'] }) as jwt.JwtPayload;
    expect(refresh).toMatchObject({ userId: user.id, sid: access.sid, tokenId: expect.any(String) });
    expect(refresh.exp! - refresh.iat!).toBe(30 * 24 * 3600);
  });

  describe('forged or misused tokens are rejected with 401', () => {
    let base: jwt.JwtPayload;
    let good: string;
    let refreshToken: string;
    beforeAll(async () => {
      const user = await makeUser(t);
      const session = await signIn(t, user);
      good = session.accessToken;
      refreshToken = session.refreshToken;
      base = jwt.decode(good) as jwt.JwtPayload;
    });

    const sign = (payload: object, secret: string, options: jwt.SignOptions = {}) =>
      jwt.sign(payload, secret, { algorithm: 'HS256', ...options });

    test('the genuine token works (control)', async () => {
      await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${good}`).expect(200);
    });

    test.each([
      [
        'alg none',
        () => {
          const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
          const body = Buffer.from(JSON.stringify(base)).toString('base64url');
          return `${header}.${body}.`;
        },
      ],
      ['wrong secret', () => sign(base, 'some-other-secret-that-is-long-enough-000000')],
      ['HS512 with the right secret', () => sign(base, TEST_ENV.JWT_ACCESS_SECRET!, { algorithm: 'HS512' })],
      ['wrong iss', () => sign({ ...base, iss: 'evil' }, TEST_ENV.JWT_ACCESS_SECRET!)],
      ['wrong aud', () => sign({ ...base, aud: 'other' }, TEST_ENV.JWT_ACCESS_SECRET!)],
      ['refresh token as access token', () => refreshToken],
      ['refresh-shaped token signed with the access secret', () => sign({ ...base, tokenId: 'x' }, TEST_ENV.JWT_ACCESS_SECRET!)],
      ['expired', () => sign({ ...base, iat: base.iat! - 90000, exp: base.iat! - 10 }, TEST_ENV.JWT_ACCESS_SECRET!)],
      ['garbage', () => 'not.a.jwt'],
    ])('%s', async (_label, make) => {
      const res = await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${make()}`);
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('unauthorized');
    });

    test('an access token used as a refresh token', async () => {
      const res = await request(t.app).post('/api/auth/refresh-token').send({ refreshToken: good });
      expect(res.status).toBe(401);
    });
  });

  test('the access token stops working once 24 h have passed', async () => {
    const user = await makeUser(t);
    const { accessToken } = await signIn(t, user);
    await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${accessToken}`).expect(200);
    t.clock.advance(24 * 3600 + 1);
    try {
      await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${accessToken}`).expect(401);
    } finally {
      t.clock.advance(-(24 * 3600 + 1));
    }
  });
});

describe('POST /api/auth/refresh-token', () => {
  test('rotates: new tokens and cookies, the old refresh token is dead', async () => {
    const user = await makeUser(t);
    const { agent, refreshToken } = await signIn(t, user);
    const res = await agent.post('/api/auth/refresh-token');
    expect(res.status).toBe(200);
    expect(res.body.refreshToken).not.toBe(refreshToken);
    expect(cookieHeader(res, 'refreshToken')).toContain(res.body.refreshToken);
    await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${res.body.accessToken}`).expect(200);
    // the agent now holds the rotated cookie: it can refresh again
    await agent.post('/api/auth/refresh-token').expect(200);
  });

  test('accepts the token in the body', async () => {
    const user = await makeUser(t);
    const { refreshToken } = await signIn(t, user);
    const res = await request(t.app).post('/api/auth/refresh-token').send({ refreshToken });
    expect(res.status).toBe(200);
  });

  test('no refresh token -> 401', async () => {
    const res = await request(t.app).post('/api/auth/refresh-token');
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('unauthorized');
  });

  test('reuse of a rotated token after the grace window -> 401 and the whole session is revoked', async () => {
    const user = await makeUser(t);
    const { refreshToken, accessToken } = await signIn(t, user);
    const first = await request(t.app).post('/api/auth/refresh-token').send({ refreshToken }).expect(200);
    t.clock.advance(t.config.refreshReuseGraceSeconds + 1);
    const replay = await request(t.app).post('/api/auth/refresh-token').send({ refreshToken });
    expect(replay.status).toBe(401);
    // every token of the session is dead: the original access token, the new access token, the new refresh token
    await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${accessToken}`).expect(401);
    await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${first.body.accessToken}`).expect(401);
    await request(t.app).post('/api/auth/refresh-token').send({ refreshToken: first.body.refreshToken }).expect(401);
    const { sid } = jwt.decode(accessToken) as { sid: string };
    const session = await t.db('sessions').where({ id: sid }).first();
    expect(session.revoked_at).not.toBeNull();
  });

  test('20 concurrent uses of one refresh token: all 200 with the one successor, no 5xx, the session lives (CONTRACT §8)', async () => {
    const user = await makeUser(t);
    const { refreshToken } = await signIn(t, user);
    const results = await Promise.all(
      Array.from({ length: 20 }, () => request(t.app).post('/api/auth/refresh-token').send({ refreshToken })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    const tokenIds = new Set(results.map((r) => (jwt.decode(r.body.refreshToken) as { tokenId: string }).tokenId));
    expect(tokenIds.size).toBe(1);
    await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${results[7]!.body.accessToken}`).expect(200);
  });

  test('a refresh for a deactivated user fails', async () => {
    const user = await makeUser(t);
    const { refreshToken } = await signIn(t, user);
    await t.db('users').where({ id: user.id }).update({ is_active: false });
    await request(t.app).post('/api/auth/refresh-token').send({ refreshToken }).expect(401);
  });
});

describe('POST /api/auth/logout', () => {
  test('revokes the session at once and clears both cookies', async () => {
    const user = await makeUser(t);
    const { agent, accessToken, refreshToken } = await signIn(t, user);
    const res = await agent.post('/api/auth/logout');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    expect(cookieHeader(res, 'accessToken')).toMatch(/Expires=Thu, 01 Jan 1970/);
    expect(cookieHeader(res, 'refreshToken')).toMatch(/Expires=Thu, 01 Jan 1970/);
    await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${accessToken}`).expect(401);
    await request(t.app).post('/api/auth/refresh-token').send({ refreshToken }).expect(401);
  });

  test('without authentication -> 401', async () => {
    await request(t.app).post('/api/auth/logout').expect(401);
  });

  test('other sessions of the same user stay signed in', async () => {
    const user = await makeUser(t);
    const a = await signIn(t, user);
    const b = await signIn(t, user);
    await request(t.app).post('/api/auth/logout').set('Authorization', `Bearer ${a.accessToken}`).expect(200);
    await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${b.accessToken}`).expect(200);
  });
});

describe('GET /api/auth/verify-admin', () => {
  test.each([['super_admin'], ['admin'], ['manager']])('%s -> 200 with the identity', async (role) => {
    const user = await makeUser(t, { roles: [role] });
    const { accessToken } = await signIn(t, user);
    const res = await request(t.app).get('/api/auth/verify-admin').set('Authorization', `Bearer ${accessToken}`);
    expect(res.status).toBe(200);
    expect(res.body.user).toMatchObject({ id: user.id, adminRole: role });
  });

  test('a plain user -> 403 forbidden', async () => {
    const user = await makeUser(t);
    const { accessToken } = await signIn(t, user);
    const res = await request(t.app).get('/api/auth/verify-admin').set('Authorization', `Bearer ${accessToken}`);
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('forbidden');
  });

  test('an application-scoped role named admin does not make a server admin', async () => {
    const user = await makeUser(t);
    await grantRole(t, user.id, 'admin', 'some-app');
    const { accessToken } = await signIn(t, user);
    await request(t.app).get('/api/auth/verify-admin').set('Authorization', `Bearer ${accessToken}`).expect(403);
  });

  test('a role removed after sign-in takes effect on the next request with the same token', async () => {
    const user = await makeUser(t, { roles: ['admin'] });
    const { accessToken } = await signIn(t, user);
    await request(t.app).get('/api/auth/verify-admin').set('Authorization', `Bearer ${accessToken}`).expect(200);
    await t.db('user_roles').where({ user_id: user.id }).delete();
    await request(t.app).get('/api/auth/verify-admin').set('Authorization', `Bearer ${accessToken}`).expect(403);
  });

  test('no token -> 401', async () => {
    await request(t.app).get('/api/auth/verify-admin').expect(401);
  });
});

describe('first-party token responses are never cached (like the OAuth ones, RFC 6749 §5.1)', () => {
  test('register, login and refresh-token answer Cache-Control: no-store and Pragma: no-cache, errors included', async () => {
    const email = uniqueEmail('nostore');
    const registered = await request(t.app)
      .post('/api/auth/register')
      .send({ email, password: DEFAULT_PASSWORD, first_name: 'No', last_name: 'Store' });
    const login = await request(t.app).post('/api/auth/login').send({ email, password: DEFAULT_PASSWORD });
    const refreshed = await request(t.app).post('/api/auth/refresh-token').send({ refreshToken: login.body.refreshToken });
    const refused = await request(t.app).post('/api/auth/login').send({ email, password: 'wrong-password-1' });
    expect([registered.status, login.status, refreshed.status, refused.status]).toEqual([201, 200, 200, 401]);
    for (const res of [registered, login, refreshed, refused]) {
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers.pragma).toBe('no-cache');
    }
    expect(refreshed.body.accessToken).toEqual(expect.any(String));
  });
});

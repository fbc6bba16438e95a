import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { makeClient, makeUser, signIn } from '../helpers/factories';
import { authorizeParams, authorizePath, csrfFrom, locationParams } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

function cookieHeader(res: request.Response, name: string): string | undefined {
  const cookies = (res.headers['set-cookie'] as unknown as string[] | undefined) ?? [];
  return cookies.find((c) => c.startsWith(`${name}=`));
}

describe('GET /login', () => {
  test('renders an accessible form with csrf and return_to; csrf cookie HttpOnly SameSite=Strict; no-store', async () => {
    const returnTo = 'http://sso.test/api/oauth/authorize?client_id=a&x="><script>';
    const res = await request(t.app).get(`/login?${new URLSearchParams({ return_to: returnTo })}`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
    expect(res.headers['referrer-policy']).toBe('same-origin');
    expect(res.text).toContain('<label for="email">');
    expect(res.text).toContain('<label for="password">');
    expect(res.text).toContain('method="post" action="/login"');
    expect(res.text).not.toContain('<script>');
    expect(res.text).toContain('&quot;>&lt;script>');
    const csrf = cookieHeader(res, 'csrf');
    expect(csrf).toMatch(/HttpOnly/);
    expect(csrf).toMatch(/SameSite=Strict/);
  });
});

describe('POST /login', () => {
  test('right password -> session cookies and 303 back to the authorize URL', async () => {
    const user = await makeUser(t);
    const agent = request.agent(t.app);
    const client = await makeClient(t);
    const returnTo = `http://sso.test${authorizePath(authorizeParams(client).params)}`;
    const csrf = await csrfFrom(agent, `/login?${new URLSearchParams({ return_to: returnTo })}`);
    const res = await agent
      .post('/login')
      .type('form')
      .send({ email: user.email.toUpperCase(), password: user.password, return_to: returnTo, csrf });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(returnTo);
    expect(cookieHeader(res, 'accessToken')).toMatch(/HttpOnly/);
    expect(cookieHeader(res, 'refreshToken')).toMatch(/HttpOnly/);
    const me = await agent.get('/api/auth/me');
    expect(me.body.user.id).toBe(user.id);
  });

  test.each([
    ['another origin', 'https://evil.test/api/oauth/authorize'],
    ['protocol-relative', '//evil.test/api/oauth/authorize'],
    ['backslash trick', '/\\evil.test/x'],
    ['own origin, other path', 'http://sso.test/api/auth/me'],
    ['javascript:', 'javascript:alert(1)'],
  ])('return_to %s is not followed: 303 to the neutral signed-in page', async (_name, returnTo) => {
    const user = await makeUser(t);
    const agent = request.agent(t.app);
    const csrf = await csrfFrom(agent, '/login');
    const res = await agent.post('/login').type('form').send({ email: user.email, password: user.password, return_to: returnTo, csrf });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/login');
    const page = await agent.get('/login');
    expect(page.status).toBe(200);
    expect(page.text).toContain('You are signed in');
    expect(page.text).toContain(user.email);
  });

  test('an allow-listed LOGIN_APPS destination is followed', async () => {
    const user = await makeUser(t);
    const agent = request.agent(t.app);
    const csrf = await csrfFrom(agent, '/login');
    const res = await agent
      .post('/login')
      .type('form')
      .send({ email: user.email, password: user.password, return_to: 'https://portal.test/home?a=1', csrf });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('https://portal.test/home?a=1');
  });

  test('wrong password and unknown email -> the same 401 page, no cookies', async () => {
    const user = await makeUser(t);
    const agent = request.agent(t.app);
    const csrf = await csrfFrom(agent, '/login');
    const wrong = await agent.post('/login').type('form').send({ email: user.email, password: 'nope-nope', csrf });
    const unknown = await agent.post('/login').type('form').send({ email: 'nobody@example.test', password: 'nope-nope', csrf });
    for (const res of [wrong, unknown]) {
      expect(res.status).toBe(401);
      expect(res.text).toContain('Incorrect email or password.');
      expect(cookieHeader(res, 'accessToken')).toBeUndefined();
    }
    expect(wrong.text).toContain(`value="${user.email}"`);
  });

  test('too many attempts -> 429 page with Retry-After', async () => {
    const user = await makeUser(t);
    const agent = request.agent(t.app);
    const csrf = await csrfFrom(agent, '/login');
    for (let i = 0; i < 10; i++) await agent.post('/login').type('form').send({ email: user.email, password: 'wrong-pass', csrf });
    const res = await agent.post('/login').type('form').send({ email: user.email, password: user.password, csrf });
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBeDefined();
    expect(res.text).toContain('Too many failed sign-in attempts');
  });

  test('missing or wrong csrf -> 403 page, nobody signed in', async () => {
    const user = await makeUser(t);
    const agent = request.agent(t.app);
    await csrfFrom(agent, '/login');
    const missing = await agent.post('/login').type('form').send({ email: user.email, password: user.password });
    const wrong = await agent
      .post('/login')
      .type('form')
      .send({ email: user.email, password: user.password, csrf: 'A'.repeat(43) });
    const noCookie = await request(t.app)
      .post('/login')
      .type('form')
      .send({ email: user.email, password: user.password, csrf: 'A'.repeat(43) });
    for (const res of [missing, wrong, noCookie]) {
      expect(res.status).toBe(403);
      expect(res.headers['content-type']).toMatch(/text\/html/);
      expect(cookieHeader(res, 'accessToken')).toBeUndefined();
    }
  });
});

describe('GET /consent and POST /consent', () => {
  async function pending(agent: TestAgent, scope = 'openid profile email') {
    const client = await makeClient(t, { name: 'Recipe <Box>', scopes: ['openid', 'profile', 'email', 'read'] });
    const { params, state } = authorizeParams(client, { scope });
    const res = await agent.get(authorizePath(params));
    return { client, state, requestId: new URL(res.headers.location).searchParams.get('request_id')! };
  }

  test('not signed in -> 303 to /login?return_to=<consent url>', async () => {
    const res = await request(t.app).get('/consent?request_id=5b0d4a59-7a9e-4c38-9a40-2d1f8a0c8e11');
    expect(res.status).toBe(303);
    const location = new URL(res.headers.location);
    expect(location.pathname).toBe('/login');
    expect(location.searchParams.get('return_to')).toBe('http://sso.test/consent?request_id=5b0d4a59-7a9e-4c38-9a40-2d1f8a0c8e11');
  });

  test('shows the client name (escaped) and scopes in plain words, with Approve and Deny', async () => {
    const { agent } = await signIn(t, await makeUser(t));
    const { requestId } = await pending(agent, 'openid email read');
    const res = await agent.get(`/consent?request_id=${requestId}`);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.text).toContain('Recipe &lt;Box>');
    expect(res.text).toContain('Confirm your identity');
    expect(res.text).toContain('See your email address');
    expect(res.text).toContain('Read your data');
    expect(res.text).not.toContain('See your name');
    expect(res.text).toContain('value="approve"');
    expect(res.text).toContain('value="deny"');
  });

  test('Approve -> 303 to the redirect URI with code and state', async () => {
    const { agent } = await signIn(t, await makeUser(t));
    const { client, requestId, state } = await pending(agent);
    const csrf = await csrfFrom(agent, `/consent?request_id=${requestId}`);
    const res = await agent.post('/consent').type('form').send({ request_id: requestId, decision: 'approve', csrf });
    expect(res.status).toBe(303);
    expect(res.headers.location.startsWith(`${client.redirectUris[0]}?`)).toBe(true);
    expect(locationParams(res.headers.location).get('code')).toBeTruthy();
    expect(locationParams(res.headers.location).get('state')).toBe(state);
  });

  test('Deny -> 303 with error=access_denied and state', async () => {
    const { agent } = await signIn(t, await makeUser(t));
    const { requestId, state } = await pending(agent);
    const csrf = await csrfFrom(agent, `/consent?request_id=${requestId}`);
    const res = await agent.post('/consent').type('form').send({ request_id: requestId, decision: 'deny', csrf });
    expect(res.status).toBe(303);
    expect(locationParams(res.headers.location).get('error')).toBe('access_denied');
    expect(locationParams(res.headers.location).get('state')).toBe(state);
  });

  test('POST /consent without the csrf field -> 403 and the request stays pending', async () => {
    const { agent } = await signIn(t, await makeUser(t));
    const { requestId } = await pending(agent);
    await csrfFrom(agent, `/consent?request_id=${requestId}`);
    const res = await agent.post('/consent').type('form').send({ request_id: requestId, decision: 'approve' });
    expect(res.status).toBe(403);
    const row = await t.db('oauth_authorization_requests').where({ id: requestId }).first();
    expect(row.consumed_at).toBeNull();
  });

  test("another user's request -> 404 page", async () => {
    const owner = await signIn(t, await makeUser(t));
    const { requestId } = await pending(owner.agent);
    const { agent } = await signIn(t, await makeUser(t));
    expect((await agent.get(`/consent?request_id=${requestId}`)).status).toBe(404);
    const csrf = await csrfFrom(agent, '/login?return_to=x');
    const res = await agent.post('/consent').type('form').send({ request_id: requestId, decision: 'approve', csrf });
    expect(res.status).toBe(404);
    expect(res.text).toContain('expired');
  });
});

describe('signing out from the browser', () => {
  test('the signed-in page offers Sign out; it revokes the session and clears both cookies', async () => {
    const user = await makeUser(t);
    const { agent, accessToken } = await signIn(t, user);
    const page = await agent.get('/login');
    expect(page.text).toContain('You are signed in');
    expect(page.text).toContain('action="/logout"');
    const csrf = await csrfFrom(agent, '/login');

    const res = await agent.post('/logout').type('form').send({ csrf });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/logout');
    const cleared = (res.headers['set-cookie'] as unknown as string[]).filter((c) => /^(accessToken|refreshToken)=;/.test(c));
    expect(cleared).toHaveLength(2);
    await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${accessToken}`).expect(401);
    expect((await agent.get('/logout')).text).toContain('You are signed out');
  });

  test('without the CSRF pair the session survives', async () => {
    const user = await makeUser(t);
    const { agent, accessToken } = await signIn(t, user);
    const res = await agent
      .post('/logout')
      .type('form')
      .send({ csrf: 'x'.repeat(43) });
    expect(res.status).toBe(403);
    await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${accessToken}`).expect(200);
  });
});

describe('the per-IP limit on the hosted forms', () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await createTestApp({ env: { RATE_LIMIT_MAX: '2' } });
  });
  afterAll(() => limited.close());

  test('over the limit, POST /login answers a 429 page with Retry-After, not the JSON of the API', async () => {
    const agent = request.agent(limited.app);
    const csrf = await csrfFrom(agent, '/login');
    for (let i = 0; i < 2; i++)
      await agent.post('/login').type('form').send({ email: 'nobody@example.test', password: 'wrong-pass', csrf });
    const res = await agent.post('/login').type('form').send({ email: 'nobody@example.test', password: 'wrong-pass', csrf });
    expect(res.status).toBe(429);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.headers['retry-after']).toMatch(/^\d+$/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.text).toContain('Too many requests');
    expect(res.text).not.toContain('"error"');
    // The JSON API keeps its contract shape under the same limit.
    const api = await request(limited.app).post('/api/auth/login').send({ email: 'nobody@example.test', password: 'wrong-pass' });
    expect(api.status).toBe(429);
    expect(api.body.error).toBe('rate_limited');
  });
});

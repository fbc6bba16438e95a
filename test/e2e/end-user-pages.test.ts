import request from 'supertest';
import { makeClient, makeUser, signIn, uniqueEmail } from '../helpers/factories';
import { nextStep, totpCode } from '../helpers/mfa';
import { authorizeParams, authorizePath, csrfFrom } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

const HTML = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { BRAND_NAME: 'Acme Login', BRAND_COLOR: '#7c3aed' } });
});
afterAll(async () => {
  await t.close();
});

function registerForm(csrf: string, email: string, extra: Record<string, string> = {}) {
  return {
    csrf,
    first_name: 'Ada',
    last_name: 'Lovelace',
    email,
    password: 'correct-horse-1',
    password_confirm: 'correct-horse-1',
    ...extra,
  };
}

describe('/register (REGISTRATION=open, the default)', () => {
  test('/login links to it; the form creates the account, signs in, and says to check the mail; the mail is sent', async () => {
    const login = await request(t.app).get('/login');
    expect(login.text).toContain('href="/register"');
    const agent = request.agent(t.app);
    const csrf = await csrfFrom(agent, '/register');
    const email = uniqueEmail('reg');
    const res = await agent.post('/register').type('form').send(registerForm(csrf, email));
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/register?done=1');
    const done = await agent.get(res.headers.location);
    expect(done.status).toBe(200);
    expect(done.text).toContain('Check your email');
    expect(done.text).toContain(email);
    const row = await t.db('users').where({ email }).first();
    expect(row).toMatchObject({ first_name: 'Ada', email_verified: false });
    const mail = t.mails.find((m) => m.to === email)!;
    expect(mail.subject).toBe('Confirm your email address for Acme Login');
    const me = await agent.get('/api/auth/me');
    expect(me.status).toBe(200);
  });

  test('bad fields: 400, each message next to its field, values kept; a taken address: 409 with a way on', async () => {
    const agent = request.agent(t.app);
    const csrf = await csrfFrom(agent, '/register');
    const bad = await agent
      .post('/register')
      .type('form')
      .send(registerForm(csrf, 'not-an-email', { first_name: ' ', password_confirm: 'other' }));
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('id="email-error"');
    expect(bad.text).toContain('id="first_name-error"');
    expect(bad.text).toContain('value="not-an-email"');
    const user = await makeUser(t);
    const csrf2 = await csrfFrom(agent, '/register');
    const taken = await agent.post('/register').type('form').send(registerForm(csrf2, user.email));
    expect(taken.status).toBe(409);
    expect(taken.text).toContain('already exists');
  });

  test('without the CSRF pair: 403 page, no account', async () => {
    const email = uniqueEmail('nocsrf');
    const res = await request(t.app).post('/register').type('form').send(registerForm('x', email));
    expect(res.status).toBe(403);
    expect(await t.db('users').where({ email }).first()).toBeUndefined();
  });

  test('on an OAuth flow: the page names the app and, once registered, continues to the authorize request', async () => {
    const client = await makeClient(t, { name: 'Payroll' });
    const returnTo = `http://sso.test${authorizePath(authorizeParams(client).params)}`;
    const agent = request.agent(t.app);
    const page = await agent.get(`/register?${new URLSearchParams({ return_to: returnTo })}`);
    expect(page.text).toContain('to continue to Payroll');
    const csrf = await csrfFrom(agent, `/register?${new URLSearchParams({ return_to: returnTo })}`);
    const res = await agent
      .post('/register')
      .type('form')
      .send(registerForm(csrf, uniqueEmail('oauth'), { return_to: returnTo }));
    const done = await agent.get(res.headers.location);
    expect(done.text).toContain('Continue to Payroll');
    expect(done.text).toContain(`href="${returnTo.replace(/&/g, '&amp;')}"`);
  });
});

describe('REGISTRATION=closed', () => {
  let closed: TestApp;
  beforeAll(async () => {
    closed = await createTestApp({ env: { REGISTRATION: 'closed' } });
  });
  afterAll(async () => {
    await closed.close();
  });

  test('the API answers 403 registration_closed and creates nothing', async () => {
    const email = uniqueEmail('closed');
    const res = await request(closed.app)
      .post('/api/auth/register')
      .send({ first_name: 'A', last_name: 'B', email, password: 'correct-horse-1' });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('registration_closed');
    expect(await closed.db('users').where({ email }).first()).toBeUndefined();
  });

  test('the page is a 404 (HTML for a browser), /login has no link, invitations still work', async () => {
    const page = await request(closed.app).get('/register').set('Accept', HTML);
    expect(page.status).toBe(404);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    const agent = request.agent(closed.app);
    const csrf = await csrfFrom(agent, '/login');
    const post = await agent
      .post('/register')
      .type('form')
      .send(registerForm(csrf, uniqueEmail('closed-page')));
    expect(post.status).toBe(404);
    const login = await request(closed.app).get('/login');
    expect(login.text).not.toContain('/register');
    const admin = await makeUser(closed, { roles: ['super_admin'] });
    const { accessToken } = await signIn(closed, admin);
    const invited = uniqueEmail('invited');
    const res = await request(closed.app)
      .post('/api/users')
      .set('Authorization', `Bearer ${accessToken}`)
      .send({ email: invited, first_name: 'I', last_name: 'N' });
    expect(res.status).toBe(201);
    expect(closed.mails.some((m) => m.to === invited && /set-password/.test(m.text))).toBe(true);
  });

  test('the OpenAPI document lists 403 on POST /api/auth/register', async () => {
    const doc = await request(closed.app).get('/api/openapi.json');
    expect(Object.keys(doc.body.paths['/api/auth/register'].post.responses)).toContain('403');
  });
});

describe('sign-in context', () => {
  test('on an authorize flow, /login and the second step say "to continue to {app}"; login_hint pre-fills the email', async () => {
    const client = await makeClient(t, { name: 'Timesheets <b>' });
    const authorize = await request(t.app).get(authorizePath(authorizeParams(client, { login_hint: 'hint@example.test' }).params));
    expect(authorize.status).toBe(302);
    const loginUrl = new URL(authorize.headers.location);
    const agent = request.agent(t.app);
    const page = await agent.get(`${loginUrl.pathname}${loginUrl.search}`);
    expect(page.text).toContain('to continue to Timesheets &lt;b>');
    expect(page.text).toContain('value="hint@example.test"');

    const user = await makeUser(t);
    const { agent: owner, csrf: _ } = { agent: (await signIn(t, user)).agent, csrf: '' };
    const setupCsrf = await csrfFrom(owner, '/account');
    await owner.post('/account/totp/setup').type('form').send({ csrf: setupCsrf });
    const secret = /id="totp-secret">([A-Z2-7]+)</.exec((await owner.get('/account')).text)![1]!;
    await owner
      .post('/account/totp/confirm')
      .type('form')
      .send({ csrf: setupCsrf, code: totpCode(t, secret) });
    nextStep(t);
    const returnTo = loginUrl.searchParams.get('return_to')!;
    const csrf = await csrfFrom(agent, `${loginUrl.pathname}${loginUrl.search}`);
    const step = await agent.post('/login').type('form').send({ csrf, email: user.email, password: user.password, return_to: returnTo });
    expect(step.text).toContain('name="mfa_token"');
    expect(step.text).toContain('to continue to Timesheets &lt;b>');
  });

  test('no name for a return_to that is not allowed, or an unknown client', async () => {
    const res = await request(t.app).get(
      `/login?${new URLSearchParams({ return_to: 'https://evil.test/api/oauth/authorize?client_id=x' })}`,
    );
    expect(res.text).not.toContain('to continue to');
  });
});

describe('recovery codes', () => {
  test('appear first on the page, focusable and announced, with copy, .txt download and "I have saved them"', async () => {
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    const csrf = await csrfFrom(agent, '/account');
    await agent.post('/account/totp/setup').type('form').send({ csrf });
    const secret = /id="totp-secret">([A-Z2-7]+)</.exec((await agent.get('/account')).text)![1]!;
    const res = await agent
      .post('/account/totp/confirm')
      .type('form')
      .send({ csrf, code: totpCode(t, secret) });
    nextStep(t);
    expect(res.status).toBe(200);
    const main = res.text.slice(res.text.indexOf('<main'));
    const panel = main.indexOf('id="recovery-codes"');
    expect(panel).toBeGreaterThan(0);
    expect(panel).toBeLessThan(main.indexOf('<h1'));
    expect(res.text).toMatch(/<section class="codes-panel" id="recovery-codes" tabindex="-1" autofocus/);
    expect(res.text).toContain('<p role="status">');
    const codes = [...res.text.matchAll(/<li><code>([^<]+)<\/code><\/li>/g)].map((m) => m[1]!);
    expect(codes.length).toBeGreaterThanOrEqual(8);
    const download = /href="data:text\/plain;charset=utf-8,([^"]+)" download="Acme-Login-recovery-codes.txt"/.exec(res.text);
    expect(download).not.toBeNull();
    const file = decodeURIComponent(download![1]!);
    for (const code of codes) expect(file).toContain(code);
    expect(res.text).toContain('data-copy-codes=');
    expect(res.text).toContain('href="/account#second-factors" id="codes-saved"');
    expect(res.text).toContain('src="/static/recovery-codes.js"');
    const script = await request(t.app).get('/static/recovery-codes.js');
    expect(script.status).toBe(200);
    expect(script.text).toContain('navigator.clipboard');
  });
});

describe('verification on /account', () => {
  test('an unconfirmed address is offered a new confirmation mail; a confirmed one is not', async () => {
    const user = await makeUser(t, { emailVerified: false });
    const { agent } = await signIn(t, user);
    const page = await agent.get('/account');
    expect(page.text).toContain('Send the confirmation email again');
    const csrf = await csrfFrom(agent, '/account');
    const before = t.mails.length;
    const res = await agent.post('/account/verification/resend').type('form').send({ csrf });
    expect(res.status).toBe(303);
    const after = await agent.get(res.headers.location);
    expect(after.text).toContain('A new confirmation email is on its way');
    expect(t.mails.slice(before).some((m) => m.to === user.email && /verify-email\?token=/.test(m.text))).toBe(true);
    const verified = await makeUser(t);
    const other = (await signIn(t, verified)).agent;
    expect((await other.get('/account')).text).not.toContain('Send the confirmation email again');
  });

  test('a never-verified account opened from another browser explains in plain words why it asks for a password', async () => {
    const agent = request.agent(t.app);
    const csrf = await csrfFrom(agent, '/register');
    const email = uniqueEmail('m1');
    await agent.post('/register').type('form').send(registerForm(csrf, email));
    const mail = t.mails.find((m) => m.to === email)!;
    const link = /(\/verify-email\?token=[^\s]+)/.exec(mail.text)![1]!;
    const page = await request(t.app).get(link);
    expect(page.text).toContain('anyone can create an account with any address');
  });
});

describe('browser errors, favicon', () => {
  test('unknown path: HTML 404 page for a browser, JSON otherwise and always under /api', async () => {
    const page = await request(t.app).get('/no-such-page').set('Accept', HTML);
    expect(page.status).toBe(404);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.text).toContain('<html lang="en">');
    expect(page.text).toContain('Page not found');
    const json = await request(t.app).get('/no-such-page');
    expect(json.body.error).toBe('not_found');
    const api = await request(t.app).get('/api/no-such').set('Accept', HTML);
    expect(api.headers['content-type']).toMatch(/json/);
    expect(api.body.error).toBe('not_found');
  });

  test('/favicon.ico is an SVG in the brand colour, cached', async () => {
    const res = await request(t.app).get('/favicon.ico');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/image\/svg\+xml/);
    expect(res.headers['cache-control']).toBe('public, max-age=86400');
    expect(res.body.toString()).toContain('fill="#7c3aed"');
  });

  test('every hosted form answers a browser over the rate limit with a 429 page and Retry-After', async () => {
    const limited = await createTestApp({ env: { RATE_LIMIT_MAX: '1', RATE_LIMIT_WINDOW_MS: '60000' } });
    try {
      for (const path of ['/login', '/register', '/forgot-password', '/set-password', '/verify-email', '/login/mfa', '/consent']) {
        const agent = request.agent(limited.app);
        await agent.post(path).set('Accept', HTML).type('form').send({});
        const res = await agent.post(path).set('Accept', HTML).set('Accept-Language', 'de').type('form').send({});
        expect([path, res.status]).toEqual([path, 429]);
        expect(res.headers['content-type']).toMatch(/text\/html/);
        expect(res.headers['retry-after']).toBeDefined();
        expect([path, res.text.slice(res.text.indexOf('<main'))]).toEqual([path, expect.stringContaining('Zu viele Versuche')]);
      }
    } finally {
      await limited.close();
    }
  });
});

describe('languages', () => {
  test('Accept-Language picks German; <html lang> says so; unknown languages fall back to English', async () => {
    const de = await request(t.app).get('/login').set('Accept-Language', 'de-CH, en;q=0.5');
    expect(de.text).toContain('<html lang="de">');
    expect(de.text).toContain('Passwort vergessen?');
    const fr = await request(t.app).get('/login').set('Accept-Language', 'fr');
    expect(fr.text).toContain('<html lang="en">');
  });

  test('ui_locales of the authorize request wins over Accept-Language through the whole sign-in', async () => {
    const client = await makeClient(t, { name: 'Wiki' });
    const authorize = await request(t.app)
      .get(authorizePath(authorizeParams(client, { ui_locales: 'fr de' }).params))
      .set('Accept-Language', 'en');
    const loginUrl = new URL(authorize.headers.location);
    const agent = request.agent(t.app);
    const page = await agent.get(`${loginUrl.pathname}${loginUrl.search}`).set('Accept-Language', 'en');
    expect(page.text).toContain('<html lang="de">');
    expect(page.text).toContain('um mit Wiki fortzufahren');
    const csrf = await csrfFrom(agent, `${loginUrl.pathname}${loginUrl.search}`);
    const wrong = await agent
      .post('/login')
      .set('Accept-Language', 'en')
      .type('form')
      .send({ csrf, email: 'x@example.test', password: 'nope-nope', return_to: loginUrl.searchParams.get('return_to')! });
    expect(wrong.text).toContain('E-Mail-Adresse oder Passwort ist falsch.');
    const direct = await request(t.app).get('/forgot-password?ui_locales=de').set('Accept-Language', 'en');
    expect(direct.text).toContain('<html lang="de">');
  });

  test('mails follow the language of the request that causes them', async () => {
    const email = uniqueEmail('de');
    await request(t.app)
      .post('/api/auth/register')
      .set('Accept-Language', 'de')
      .send({ first_name: 'A', last_name: 'B', email, password: 'correct-horse-1' });
    const mail = t.mails.find((m) => m.to === email)!;
    expect(mail.subject).toBe('Bestätigen Sie Ihre E-Mail-Adresse für Acme Login');
    expect(mail.text).toContain('Diese Nachricht ist für');
    expect(mail.html).toContain('background: #7c3aed');
  });
});

describe('branding', () => {
  test('BRAND_NAME and BRAND_COLOR shape the page; BRAND_LOGO_URL is shown and allowed by the CSP', async () => {
    const branded = await createTestApp({ env: { BRAND_NAME: 'Acme', BRAND_LOGO_URL: 'https://cdn.acme.test/logo.svg' } });
    try {
      const res = await request(branded.app).get('/login');
      expect(res.text).toContain('<title>Sign in · Acme</title>');
      expect(res.text).toContain('src="https://cdn.acme.test/logo.svg"');
      expect(res.headers['content-security-policy']).toContain("img-src 'self' data: https://cdn.acme.test");
    } finally {
      await branded.close();
    }
    const page = await request(t.app).get('/login');
    expect(page.text).toContain('--accent: #7c3aed');
    expect(page.text).toContain('<span>Acme Login</span>');
  });
});

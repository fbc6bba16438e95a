import request from 'supertest';
import { sendSetPasswordEmail, sendVerificationEmail } from '../../src/services/email-links.service';
import { makeUser, signIn } from '../helpers/factories';
import { createTestApp, type TestApp } from '../helpers/test-app';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

function tokenFromLastMail(path: '/verify-email' | '/set-password'): string {
  const mail = t.mails[t.mails.length - 1]!;
  const match = new RegExp(`${path}\\?token=([A-Za-z0-9_-]+)`).exec(mail.text);
  if (!match) throw new Error(`no ${path} link in ${mail.text}`);
  return match[1]!;
}

async function setPasswordLink(user: { id: string; email: string; firstName: string }): Promise<string> {
  await sendSetPasswordEmail(t.ctx, user, 'reset');
  return tokenFromLastMail('/set-password');
}

function hiddenField(html: string, name: string): string {
  const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  if (!match) throw new Error(`no hidden field ${name}`);
  return match[1]!;
}

function cookieLine(res: request.Response, name: string): string | undefined {
  return ((res.headers['set-cookie'] as unknown as string[] | undefined) ?? []).find((c) => c.startsWith(`${name}=`));
}

/** Opens the page with an agent (keeps the CSRF cookie) and returns the form's CSRF value. */
async function openForm(agent: ReturnType<typeof request.agent>, url: string) {
  const page = await agent.get(url);
  expect(page.status).toBe(200);
  return { page, csrf: hiddenField(page.text, 'csrf') };
}

describe('GET /set-password', () => {
  test('renders the form with a CSRF field matching an HttpOnly SameSite=Strict cookie, never cached, not frameable', async () => {
    const user = await makeUser(t);
    const token = await setPasswordLink(user);
    const res = await request(t.app).get(`/set-password?token=${token}`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(res.text).toContain('<form method="post" action="/set-password">');
    expect(res.text).toContain(user.email);
    expect(res.text).not.toContain('<script');
    expect(hiddenField(res.text, 'token')).toBe(token);
    const cookie = cookieLine(res, 'csrf')!;
    expect(cookie).toBeDefined();
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Strict/i);
    expect(cookie).toMatch(/Path=\//);
    expect(cookie.split(';')[0]).toBe(`csrf=${hiddenField(res.text, 'csrf')}`);
  });

  test('an invalid or missing token -> 400 page, no form', async () => {
    for (const url of ['/set-password?token=nope', '/set-password', `/set-password?token=${'A'.repeat(43)}`]) {
      const res = await request(t.app).get(url);
      expect(res.status).toBe(400);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.text).toContain('This link is not valid');
      expect(res.text).not.toContain('<form');
    }
  });
});

describe('POST /set-password', () => {
  test('a valid post sets the password, verifies the address, burns the link and answers 303', async () => {
    const user = await makeUser(t, { emailVerified: false });
    const token = await setPasswordLink(user);
    const agent = request.agent(t.app);
    const { csrf } = await openForm(agent, `/set-password?token=${token}`);
    const res = await agent
      .post('/set-password')
      .type('form')
      .send({ token, csrf, password: 'page-secret-1', password_confirm: 'page-secret-1' });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/set-password?done=1');
    expect(res.headers['cache-control']).toBe('no-store');

    const done = await agent.get(res.headers.location!);
    expect(done.status).toBe(200);
    expect(done.text).toContain('Password set');

    expect((await t.db('users').where({ id: user.id }).first()).email_verified).toBe(true);
    expect((await request(t.app).post('/api/auth/login').send({ email: user.email, password: 'page-secret-1' })).status).toBe(200);
    expect((await agent.get(`/set-password?token=${token}`)).status).toBe(400);
  });

  test('without the CSRF cookie -> 403 and the link stays usable', async () => {
    const user = await makeUser(t);
    const token = await setPasswordLink(user);
    const { csrf } = await openForm(request.agent(t.app), `/set-password?token=${token}`);
    const res = await request(t.app)
      .post('/set-password')
      .type('form')
      .send({ token, csrf, password: 'page-secret-1', password_confirm: 'page-secret-1' });
    expect(res.status).toBe(403);
    expect(res.text).toContain('Please try again');
    expect((await request(t.app).post('/api/auth/verify-email').send({ token })).status).toBe(200);
    expect((await request(t.app).post('/api/auth/login').send({ email: user.email, password: user.password })).status).toBe(200);
  });

  test('without the CSRF field, or with another value -> 403', async () => {
    const user = await makeUser(t);
    const token = await setPasswordLink(user);
    const agent = request.agent(t.app);
    const { csrf } = await openForm(agent, `/set-password?token=${token}`);
    const base = { token, password: 'page-secret-1', password_confirm: 'page-secret-1' };
    expect((await agent.post('/set-password').type('form').send(base)).status).toBe(403);
    const forged = csrf.slice(0, -1) + (csrf.endsWith('A') ? 'B' : 'A');
    expect(
      (
        await agent
          .post('/set-password')
          .type('form')
          .send({ ...base, csrf: forged })
      ).status,
    ).toBe(403);
    expect((await request(t.app).post('/api/auth/verify-email').send({ token })).status).toBe(200);
  });

  test('an attacker’s own cookie+field pair does not help without the victim’s link', async () => {
    const agent = request.agent(t.app);
    const user = await makeUser(t);
    const { csrf } = await openForm(agent, `/set-password?token=${await setPasswordLink(user)}`);
    const res = await agent
      .post('/set-password')
      .type('form')
      .send({ token: 'B'.repeat(43), csrf, password: 'page-secret-1', password_confirm: 'page-secret-1' });
    expect(res.status).toBe(400);
    expect(res.text).toContain('This link is not valid');
  });

  test('passwords that differ or are too short -> 400 with the form and the error, link kept', async () => {
    const user = await makeUser(t);
    const token = await setPasswordLink(user);
    const agent = request.agent(t.app);
    const { csrf } = await openForm(agent, `/set-password?token=${token}`);
    const differ = await agent
      .post('/set-password')
      .type('form')
      .send({ token, csrf, password: 'page-secret-1', password_confirm: 'page-secret-2' });
    expect(differ.status).toBe(400);
    expect(differ.text).toContain('The two passwords are not the same');
    expect(differ.text).toContain('<form method="post" action="/set-password">');
    const short = await agent
      .post('/set-password')
      .type('form')
      .send({ token, csrf: hiddenField(differ.text, 'csrf'), password: '123', password_confirm: '123' });
    expect(short.status).toBe(400);
    expect(short.text).toContain('at least 6 characters');
    expect((await request(t.app).post('/api/auth/verify-email').send({ token })).status).toBe(200);
  });

  test('a valid post signs out every session of the account', async () => {
    const user = await makeUser(t);
    const session = await signIn(t, user);
    const token = await setPasswordLink(user);
    const agent = request.agent(t.app);
    const { csrf } = await openForm(agent, `/set-password?token=${token}`);
    const res = await agent
      .post('/set-password')
      .type('form')
      .send({ token, csrf, password: 'page-secret-1', password_confirm: 'page-secret-1' });
    expect(res.status).toBe(303);
    expect((await session.agent.get('/api/auth/me')).status).toBe(401);
  });
});

describe('/verify-email page', () => {
  test('signed in as the account: GET shows a confirm form; a valid POST marks the address verified, ends the session and answers 303', async () => {
    const user = await makeUser(t, { emailVerified: false });
    await sendVerificationEmail(t.ctx, user);
    const token = tokenFromLastMail('/verify-email');
    const { agent, accessToken } = await signIn(t, user);
    const { page, csrf } = await openForm(agent, `/verify-email?token=${token}`);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.text).toContain('<form method="post" action="/verify-email">');
    expect(page.text).toContain(user.email);
    expect(cookieLine(page, 'csrf')).toMatch(/SameSite=Strict/i);
    // Opening the page (what a mail scanner does) changes nothing.
    expect((await t.db('users').where({ id: user.id }).first()).email_verified).toBe(false);

    const res = await agent.post('/verify-email').type('form').send({ token, csrf });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/verify-email?verified=1');
    expect((await t.db('users').where({ id: user.id }).first()).email_verified).toBe(true);
    expect(cookieLine(res, 'accessToken')).toMatch(/Expires=Thu, 01 Jan 1970/);
    expect((await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${accessToken}`)).status).toBe(401);
    const done = await agent.get('/verify-email?verified=1');
    expect(done.status).toBe(200);
    expect(done.text).toContain('Email address confirmed');
    expect((await agent.get(`/verify-email?token=${token}`)).status).toBe(400);
  });

  test('not signed in as a never-verified account: the page asks to choose a password, which locks the registrant out (CONTRACT §8)', async () => {
    const registrant = await makeUser(t, { emailVerified: false, password: 'squatter-pass-1' });
    const squatter = await signIn(t, registrant);
    await sendVerificationEmail(t.ctx, registrant);
    const token = tokenFromLastMail('/verify-email');
    const owner = request.agent(t.app);
    const { page, csrf } = await openForm(owner, `/verify-email?token=${token}`);
    expect(page.text).toContain('<form method="post" action="/set-password">');
    expect(page.text).toContain('we ask you to choose a new password');
    // A forged confirm post (the old form) verifies nothing either: it answers with the same password form.
    const forged = await owner.post('/verify-email').type('form').send({ token, csrf });
    expect(forged.status).toBe(200);
    expect(forged.text).toContain('action="/set-password"');
    expect((await t.db('users').where({ id: registrant.id }).first()).email_verified).toBe(false);

    const csrf2 = hiddenField(forged.text, 'csrf');
    const set = await owner
      .post('/set-password')
      .type('form')
      .send({ token, csrf: csrf2, password: 'owner-pass-123', password_confirm: 'owner-pass-123' });
    expect(set.status).toBe(303);
    expect((await t.db('users').where({ id: registrant.id }).first()).email_verified).toBe(true);
    expect((await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${squatter.accessToken}`)).status).toBe(401);
    expect((await request(t.app).post('/api/auth/login').send({ email: registrant.email, password: 'squatter-pass-1' })).status).toBe(401);
  });

  test('POST without the CSRF cookie or field -> 403, address stays unverified', async () => {
    const user = await makeUser(t, { emailVerified: false });
    await sendVerificationEmail(t.ctx, user);
    const token = tokenFromLastMail('/verify-email');
    const agent = request.agent(t.app);
    const { csrf } = await openForm(agent, `/verify-email?token=${token}`);
    expect((await request(t.app).post('/verify-email').type('form').send({ token, csrf })).status).toBe(403);
    expect((await agent.post('/verify-email').type('form').send({ token })).status).toBe(403);
    expect((await t.db('users').where({ id: user.id }).first()).email_verified).toBe(false);
  });

  test('a set-password link or an expired link is not a verification link -> 400', async () => {
    const user = await makeUser(t, { emailVerified: false });
    const setToken = await setPasswordLink(user);
    expect((await request(t.app).get(`/verify-email?token=${setToken}`)).status).toBe(400);
    await sendVerificationEmail(t.ctx, user);
    const token = tokenFromLastMail('/verify-email');
    t.clock.advance(24 * 3600 + 1);
    const res = await request(t.app).get(`/verify-email?token=${token}`);
    expect(res.status).toBe(400);
    expect(res.text).toContain('This link is not valid');
  });
});

describe('/forgot-password page', () => {
  test('the login page links to it', async () => {
    const res = await request(t.app).get('/login');
    expect(res.text).toContain('href="/forgot-password"');
  });

  test('known and unknown addresses get the same answer; only the known one gets a set-password mail', async () => {
    const user = await makeUser(t);
    const agent = request.agent(t.app);
    const { page, csrf } = await openForm(agent, '/forgot-password');
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.text).toContain('<label for="email">');

    t.mails.length = 0;
    const unknown = await agent.post('/forgot-password').type('form').send({ csrf, email: 'nobody-here@example.test' });
    const known = await agent.post('/forgot-password').type('form').send({ csrf, email: user.email.toUpperCase() });
    for (const res of [unknown, known]) {
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe('/forgot-password?sent=1');
    }
    expect(t.mails.map((m) => m.to)).toEqual([user.email]);
    const token = tokenFromLastMail('/set-password');
    const sent = await agent.get('/forgot-password?sent=1');
    expect(sent.text).toContain('If an account exists');

    // the mailed link really sets the password
    const form = await openForm(agent, `/set-password?token=${token}`);
    await agent
      .post('/set-password')
      .type('form')
      .send({ token, csrf: form.csrf, password: 'brand-new-pass', password_confirm: 'brand-new-pass' })
      .expect(303);
    await request(t.app).post('/api/auth/login').send({ email: user.email, password: 'brand-new-pass' }).expect(200);
  });

  test('a post without the CSRF cookie and field is refused and sends nothing', async () => {
    const user = await makeUser(t);
    t.mails.length = 0;
    const res = await request(t.app)
      .post('/forgot-password')
      .type('form')
      .send({ email: user.email, csrf: 'x'.repeat(43) });
    expect(res.status).toBe(403);
    expect(t.mails).toHaveLength(0);
  });

  test('an invalid address re-renders the form with an error', async () => {
    const agent = request.agent(t.app);
    const { csrf } = await openForm(agent, '/forgot-password');
    const res = await agent.post('/forgot-password').type('form').send({ csrf, email: 'not-an-address' });
    expect(res.status).toBe(400);
    expect(res.text).toContain('Enter a valid email address.');
    expect(res.text).toContain('value="not-an-address"');
  });
});

describe('GET /', () => {
  test('sends a person who opens the base address to the sign-in page', async () => {
    const res = await request(t.app).get('/');
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/login');
  });
});

describe('account forms refuse posts from another origin even with a planted CSRF pair', () => {
  test('forgot-password from a sibling origin -> 403, nothing sent', async () => {
    const user = await makeUser(t);
    const agent = request.agent(t.app);
    const { csrf } = await openForm(agent, '/forgot-password');
    t.mails.length = 0;
    const res = await agent.post('/forgot-password').set('Origin', 'https://evil.sso.test').type('form').send({ csrf, email: user.email });
    expect(res.status).toBe(403);
    expect(t.mails).toHaveLength(0);
    await agent.post('/forgot-password').set('Origin', 'http://sso.test').type('form').send({ csrf, email: user.email }).expect(303);
  });
});

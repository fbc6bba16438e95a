import request from 'supertest';
import { makeSignedInUser, makeUser, signIn, uniqueEmail } from '../helpers/factories';
import { csrfFrom } from '../helpers/oauth';
import { totpCode } from '../helpers/mfa';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Sign-in by email (docs/passwords.md): one mail with a link and a code, 202 for every address, single use, 10
 * minutes, a new request replaces the old, five wrong codes end it and count on the throttle, second factors still
 * asked, amr ["otp"], another browser confirms first, the setting turns it off.
 */
let t: TestApp;
let admin: string;
beforeAll(async () => {
  t = await createTestApp();
  admin = (await makeSignedInUser(t, ['super_admin'])).bearer;
});
afterAll(async () => {
  await t.close();
});

const mailsTo = (email: string) => t.mails.filter((m) => m.to === email);
function lastSignInMail(email: string) {
  const mail = mailsTo(email).pop()!;
  const token = /\/login\/email\?token=([\w-]+)/.exec(mail.text)![1]!;
  const code = /: (\d{6})\n/.exec(mail.text)![1]!;
  return { mail, token, code };
}
const ask = (email: string, agent = request.agent(t.app), lang = 'en') =>
  agent.post('/api/auth/login/email').set('Accept-Language', lang).send({ email });
const verify = (email: string, code: string) => request(t.app).post('/api/auth/login/email/verify').send({ email, code });

describe('the request', () => {
  test('202 with the same body for a known, an unknown and an unverified address; only the verified account gets mail', async () => {
    const known = await makeUser(t);
    const unverified = await makeUser(t, { emailVerified: false });
    const unknown = uniqueEmail('nobody');
    const answers = await Promise.all([known.email, unknown, unverified.email].map((e) => ask(e)));
    for (const res of answers) {
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ success: true });
    }
    expect(mailsTo(known.email)).toHaveLength(1);
    expect(mailsTo(unknown)).toHaveLength(0);
    expect(mailsTo(unverified.email)).toHaveLength(0);
    const { mail } = lastSignInMail(known.email);
    expect(mail.subject).toBe('Your sign-in link for service-sso');
    expect(mail.text).toContain('http://sso.test/login/email?token=');
    expect(mail.text).toMatch(/valid 10 minutes and work once/);
    expect(mail.html).toContain('Sign me in');
  });

  test('the mail is in the language of the request', async () => {
    const user = await makeUser(t);
    await ask(user.email, undefined, 'de');
    const { mail } = lastSignInMail(user.email);
    expect(mail.subject).toBe('Ihr Anmeldelink für service-sso');
    expect(mail.text).toContain('Oder geben Sie diesen Code auf der Anmeldeseite ein:');
    expect(mail.text).toContain('10 Minuten gültig');
  });

  test('bad input is a 400 validation_error', async () => {
    const res = await request(t.app).post('/api/auth/login/email').send({ email: 'not-an-address' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
  });
});

describe('the code', () => {
  test('right code: signed in as POST /login answers, amr ["otp"], audited with method email; the code works once', async () => {
    const user = await makeUser(t);
    await ask(user.email);
    const { code, token } = lastSignInMail(user.email);
    const res = await verify(user.email, code);
    expect(res.status).toBe(200);
    expect(res.body.user.email).toBe(user.email);
    expect(String(res.headers['set-cookie'])).toMatch(/accessToken=/);
    const me = await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${res.body.accessToken}`);
    expect(me.body.user.amr).toEqual(['otp']);
    const event = await t.db('audit_events').where({ type: 'auth.login.succeeded', subject_id: user.id }).orderBy('id', 'desc').first();
    expect(event.detail).toMatchObject({ method: 'email', via: 'code', amr: ['otp'] });
    expect((await verify(user.email, code)).status).toBe(401);
    // Using the code burnt the link too.
    expect((await request(t.app).get(`/login/email?token=${token}`)).status).toBe(400);
  });

  test('a new request replaces the previous one: the old code and link stop working', async () => {
    const user = await makeUser(t);
    await ask(user.email);
    const first = lastSignInMail(user.email);
    await ask(user.email);
    const second = lastSignInMail(user.email);
    expect((await verify(user.email, first.code === second.code ? '000000' : first.code)).status).toBe(401);
    expect((await request(t.app).get(`/login/email?token=${first.token}`)).status).toBe(400);
    expect((await verify(user.email, second.code)).status).toBe(200);
  });

  test('after 10 minutes neither the code nor the link works', async () => {
    const user = await makeUser(t);
    await ask(user.email);
    const { code, token } = lastSignInMail(user.email);
    t.clock.advance(601);
    expect((await verify(user.email, code)).status).toBe(401);
    expect((await request(t.app).get(`/login/email?token=${token}`)).status).toBe(400);
  });

  test('five wrong codes end the request (the right one no longer works) and count on the address throttle', async () => {
    const user = await makeUser(t);
    await ask(user.email);
    const { code } = lastSignInMail(user.email);
    const wrong = code === '111111' ? '222222' : '111111';
    for (let i = 0; i < 5; i++) {
      const res = await verify(user.email, wrong);
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_credentials');
    }
    expect((await verify(user.email, code)).status).toBe(401);
    const failures = await t.db('login_failures').where({ email: user.email }).first();
    expect(failures.failures).toBeGreaterThanOrEqual(6);
    // Four more wrong attempts reach the sign-in lock of the address: 429 with Retry-After, passwords included.
    for (let i = 0; i < 4; i++) await verify(user.email, wrong);
    const locked = await request(t.app).post('/api/auth/login').send({ email: user.email, password: user.password });
    expect(locked.status).toBe(429);
    expect(locked.headers['retry-after']).toBeDefined();
  });

  test('an account with a second factor still asks for it; the session then has amr ["otp","otp"]', async () => {
    const user = await makeUser(t);
    const { accessToken } = await signIn(t, user);
    const setup = await request(t.app).post('/api/auth/mfa/totp/setup').set('Authorization', `Bearer ${accessToken}`).send({});
    expect(setup.status).toBe(200);
    const confirm = await request(t.app)
      .post('/api/auth/mfa/totp/confirm')
      .set('Authorization', `Bearer ${accessToken}`)
      .send({ code: totpCode(t, setup.body.secret) });
    expect(confirm.status).toBe(200);
    t.clock.advance(31);
    await ask(user.email);
    const { code } = lastSignInMail(user.email);
    const first = await verify(user.email, code);
    expect(first.status).toBe(401);
    expect(first.body).toMatchObject({ error: 'mfa_required', methods: expect.arrayContaining(['totp']) });
    expect(first.headers['set-cookie']).toBeUndefined();
    const second = await request(t.app)
      .post('/api/auth/login/mfa')
      .send({ mfa_token: first.body.mfa_token, code: totpCode(t, setup.body.secret) });
    expect(second.status).toBe(200);
    const me = await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${second.body.accessToken}`);
    expect(me.body.user.amr).toEqual(['otp', 'otp']);
  });
});

describe('the link', () => {
  test('without COOKIE_SECURE no browser binding is set: even the browser that asked gets the confirmation page', async () => {
    const user = await makeUser(t);
    const browser = request.agent(t.app);
    const asked = await ask(user.email, browser);
    expect(String(asked.headers['set-cookie'] ?? '')).not.toMatch(/email_sign_in/);
    const { token } = lastSignInMail(user.email);
    const page = await browser.get(`/login/email?token=${token}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Sign in on this device?');
    expect(String(page.headers['set-cookie'] ?? '')).not.toMatch(/accessToken=/);
    expect((await browser.get('/api/auth/me')).status).toBe(401);
  });

  test('opened in another browser: a confirmation page first (fetching it signs nobody in), then the post signs in', async () => {
    const user = await makeUser(t);
    await ask(user.email);
    const { token } = lastSignInMail(user.email);
    const other = request.agent(t.app);
    const page = await other.get(`/login/email?token=${token}`).set('Accept-Language', 'de');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Auf diesem Gerät anmelden?');
    expect(String(page.headers['set-cookie'] ?? '')).not.toMatch(/accessToken=/);
    const again = await other.get(`/login/email?token=${token}`);
    expect(again.status).toBe(200);
    const csrf = /name="csrf" value="([^"]+)"/.exec(again.text)![1]!;
    const confirmed = await other.post('/login/email/confirm').type('form').send({ csrf, token });
    expect(confirmed.status).toBe(303);
    expect((await other.get('/api/auth/me')).body.user.email).toBe(user.email);
  });

  test('a forged or malformed token is the invalid-link page', async () => {
    expect((await request(t.app).get('/login/email?token=abc')).status).toBe(400);
    const res = await request(t.app).get(`/login/email?token=${'A'.repeat(43)}`);
    expect(res.status).toBe(400);
    expect(res.text).toContain('This link is not valid');
  });
});

describe('the pages', () => {
  test('/login offers the button; the form leads to the code page (same text for every address); the code signs in', async () => {
    const user = await makeUser(t);
    const browser = request.agent(t.app);
    const login = await browser.get('/login');
    expect(login.text).toContain('Email me a sign-in link');
    const csrf = await csrfFrom(browser, '/login');
    const sent = await browser.post('/login/email').type('form').send({ csrf, email: user.email, password: '' });
    expect(sent.status).toBe(200);
    expect(sent.text).toContain(`If ${user.email} belongs to an account`);
    const unknown = await browser
      .post('/login/email')
      .type('form')
      .send({ csrf: await csrfFrom(browser, '/login'), email: uniqueEmail('ghost') });
    expect(unknown.status).toBe(200);
    expect(unknown.text).toContain('belongs to an account, we have just sent it');
    const { code } = lastSignInMail(user.email);
    const codeCsrf = /name="csrf" value="([^"]+)"/.exec(unknown.text)![1]!;
    const wrong = await browser
      .post('/login/email/code')
      .type('form')
      .send({ csrf: codeCsrf, email: user.email, code: code === '999999' ? '888888' : '999999' });
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('That code is not valid or has expired.');
    const csrf2 = /name="csrf" value="([^"]+)"/.exec(wrong.text)![1]!;
    const ok = await browser.post('/login/email/code').type('form').send({ csrf: csrf2, email: user.email, code });
    expect(ok.status).toBe(303);
    expect((await browser.get('/api/auth/me')).body.user.email).toBe(user.email);
  });

  test('German code page', async () => {
    const browser = request.agent(t.app);
    const csrf = await csrfFrom(browser, '/login');
    const sent = await browser
      .post('/login/email')
      .set('Accept-Language', 'de')
      .type('form')
      .send({ csrf, email: uniqueEmail('de') });
    expect(sent.status).toBe(200);
    expect(sent.text).toContain('Sehen Sie in Ihr Postfach');
    expect(sent.text).toContain('<html lang="de"');
  });
});

describe('the setting email_sign_in', () => {
  afterAll(async () => {
    await request(t.app).patch('/api/admin/settings').set('Authorization', admin).send({ email_sign_in: true });
  });

  test('off: /login offers nothing, the endpoints and pages answer 404, no mail; on again: it works', async () => {
    const user = await makeUser(t);
    await ask(user.email);
    const { token } = lastSignInMail(user.email);
    const before = mailsTo(user.email).length;
    expect((await request(t.app).patch('/api/admin/settings').set('Authorization', admin).send({ email_sign_in: false })).status).toBe(200);
    expect((await request(t.app).get('/login')).text).not.toContain('Email me a sign-in link');
    const off = await ask(user.email);
    expect(off.status).toBe(404);
    expect(off.body.error).toBe('not_found');
    expect((await verify(user.email, '123456')).status).toBe(404);
    expect((await request(t.app).get(`/login/email?token=${token}`)).status).toBe(404);
    expect(mailsTo(user.email)).toHaveLength(before);
  });
});

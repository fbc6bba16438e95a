import request from 'supertest';
import { sha256Hex } from '../../src/lib/crypto';
import { MAX_ANONYMOUS_LINKS_PER_HOUR } from '../../src/services/email-links.service';
import { makeUser, signIn, uniqueEmail } from '../helpers/factories';
import { linkIn, startSmtpServer, type TestSmtpServer } from '../helpers/smtp';
import { createTestApp, type TestApp } from '../helpers/test-app';

let smtp: TestSmtpServer;
let t: TestApp;

beforeAll(async () => {
  smtp = await startSmtpServer();
  t = await createTestApp({ mailer: 'smtp', env: { SMTP_URL: smtp.url } });
});
afterAll(async () => {
  await t.close();
  await smtp.close();
});

async function register(email: string, password = 'first-secret-1') {
  const res = await request(t.app).post('/api/auth/register').send({ first_name: 'Ada', last_name: 'Lovelace', email, password });
  expect(res.status).toBe(201);
  await t.ctx.mailer.idle();
  return res;
}

async function forgotPasswordLink(email: string): Promise<string> {
  const res = await request(t.app).post('/api/auth/forgot-password').send({ email });
  expect(res.status).toBe(202);
  await t.ctx.mailer.idle();
  const mails = smtp.mailsTo(email);
  return linkIn(mails[mails.length - 1]!, '/set-password').token;
}

describe('verification link from registration (real SMTP)', () => {
  test('register -> mail -> verify-email twice -> set-password -> second use 400 -> verified, new password signs in', async () => {
    const email = uniqueEmail('reg');
    const registered = await register(email);

    const mails = smtp.mailsTo(email);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.subject).toBe('Confirm your email address for service-sso');
    const link = linkIn(mails[0]!, '/verify-email');
    expect(link.url.startsWith('http://sso.test/verify-email?token=')).toBe(true);
    expect(link.token).toMatch(/^[A-Za-z0-9_-]{43}$/);

    for (let i = 0; i < 2; i++) {
      const check = await request(t.app).post('/api/auth/verify-email').send({ token: link.token });
      expect(check.status).toBe(200);
      expect(check.body).toEqual({ valid: true, email, purpose: 'verify_email' });
    }
    const stored = await t
      .db('email_tokens')
      .where({ token_hash: sha256Hex(link.token) })
      .first();
    expect(stored).toMatchObject({ purpose: 'verify_email', used_at: null });
    expect(await t.db('email_tokens').where({ token_hash: link.token }).first()).toBeUndefined();

    const set = await request(t.app).post('/api/auth/set-password').send({ token: link.token, password: 'brand-new-secret' });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ success: true });

    const again = await request(t.app).post('/api/auth/set-password').send({ token: link.token, password: 'another-secret' });
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('validation_error');
    const inspectUsed = await request(t.app).post('/api/auth/verify-email').send({ token: link.token });
    expect(inspectUsed.status).toBe(400);

    const user = await t.db('users').where({ email }).first();
    expect(user.email_verified).toBe(true);
    expect(
      (
        await t
          .db('email_tokens')
          .where({ token_hash: sha256Hex(link.token) })
          .first()
      ).used_at,
    ).not.toBeNull();

    const oldLogin = await request(t.app).post('/api/auth/login').send({ email, password: 'first-secret-1' });
    expect(oldLogin.status).toBe(401);
    const newLogin = await request(t.app).post('/api/auth/login').send({ email, password: 'brand-new-secret' });
    expect(newLogin.status).toBe(200);
    expect(newLogin.body.user.email_verified).toBe(true);

    // Setting a password from a link signs out every earlier session (docs/self-service.md).
    const me = await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${registered.body.accessToken}`);
    expect(me.status).toBe(401);
  });

  test('verify-email/confirm by the signed-in registrant marks the address verified, burns the link, keeps the password and ends every session', async () => {
    const email = uniqueEmail('confirm');
    const registered = await register(email, 'keep-this-secret');
    const { token } = linkIn(smtp.mailsTo(email)[0]!, '/verify-email');

    const bearer = `Bearer ${registered.body.accessToken}`;
    const res = await request(t.app).post('/api/auth/verify-email/confirm').set('Authorization', bearer).send({ token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, email, email_verified: true });
    expect((await t.db('users').where({ email }).first()).email_verified).toBe(true);
    // CONTRACT §8: confirming through the link ends every session of the account.
    expect((await request(t.app).get('/api/auth/me').set('Authorization', bearer)).status).toBe(401);

    expect((await request(t.app).post('/api/auth/verify-email').send({ token })).status).toBe(400);
    expect((await request(t.app).post('/api/auth/verify-email/confirm').send({ token })).status).toBe(400);
    expect((await request(t.app).post('/api/auth/login').send({ email, password: 'keep-this-secret' })).status).toBe(200);
  });

  test('pre-account hijack: the mailbox owner (not signed in) must choose a password; the registrant is locked out (CONTRACT §8)', async () => {
    const email = uniqueEmail('victim');
    const squatter = await register(email, 'squatter-pass-1');
    const mail = smtp.mailsTo(email)[0]!;
    // The mail says whom it is for and what to do if it was not them; it does not echo the registrant's name.
    expect(mail.text).toContain(`This message is for ${email}`);
    expect(mail.text).toMatch(/If it was not you/);
    expect(mail.text).not.toContain('Ada');
    const { token } = linkIn(mail, '/verify-email');

    const confirm = await request(t.app).post('/api/auth/verify-email/confirm').send({ token });
    expect(confirm.status).toBe(409);
    expect(confirm.body.error).toBe('conflict');
    // Nothing was consumed or verified: the link still works to choose a password.
    expect((await t.db('users').where({ email }).first()).email_verified).toBe(false);
    expect((await request(t.app).post('/api/auth/set-password').send({ token, password: 'owner-pass-123' })).status).toBe(200);

    expect((await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${squatter.body.accessToken}`)).status).toBe(401);
    expect((await request(t.app).post('/api/auth/refresh-token').send({ refreshToken: squatter.body.refreshToken })).status).toBe(401);
    expect((await request(t.app).post('/api/auth/login').send({ email, password: 'squatter-pass-1' })).status).toBe(401);
    expect((await request(t.app).post('/api/auth/login').send({ email, password: 'owner-pass-123' })).status).toBe(200);
  });

  test('verify-email/confirm refuses a set-password link', async () => {
    const user = await makeUser(t);
    const token = await forgotPasswordLink(user.email);
    const res = await request(t.app).post('/api/auth/verify-email/confirm').send({ token });
    expect(res.status).toBe(400);
    expect((await request(t.app).post('/api/auth/verify-email').send({ token })).body).toEqual({
      valid: true,
      email: user.email,
      purpose: 'set_password',
    });
  });

  test('expired verification link -> 400 on verify-email and set-password', async () => {
    const email = uniqueEmail('expire');
    await register(email);
    const { token } = linkIn(smtp.mailsTo(email)[0]!, '/verify-email');
    t.clock.advance(24 * 3600 - 60);
    expect((await request(t.app).post('/api/auth/verify-email').send({ token })).status).toBe(200);
    t.clock.advance(61);
    const res = await request(t.app).post('/api/auth/verify-email').send({ token });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
    expect((await request(t.app).post('/api/auth/set-password').send({ token, password: 'new-secret-1' })).status).toBe(400);
    expect((await t.db('users').where({ email }).first()).email_verified).toBe(false);
  });

  test('expired set-password link (1 h) -> 400 and the password is unchanged', async () => {
    const user = await makeUser(t);
    const token = await forgotPasswordLink(user.email);
    t.clock.advance(3601);
    const res = await request(t.app).post('/api/auth/set-password').send({ token, password: 'too-late-secret' });
    expect(res.status).toBe(400);
    expect((await request(t.app).post('/api/auth/login').send({ email: user.email, password: user.password })).status).toBe(200);
  });

  test('unknown, malformed and missing tokens -> 400 validation_error', async () => {
    for (const body of [{ token: 'A'.repeat(43) }, { token: 'not a token!' }, {}, { token: 42 }]) {
      const res = await request(t.app).post('/api/auth/verify-email').send(body);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('validation_error');
    }
    const res = await request(t.app)
      .post('/api/auth/set-password')
      .send({ token: 'B'.repeat(43), password: 'long-enough' });
    expect(res.status).toBe(400);
  });

  test('set-password with a too short password -> 400 and the link stays usable', async () => {
    const user = await makeUser(t);
    const token = await forgotPasswordLink(user.email);
    const res = await request(t.app).post('/api/auth/set-password').send({ token, password: '12345' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
    expect(
      (
        await request(t.app)
          .post('/api/auth/set-password')
          .send({ token, password: 'x'.repeat(73) })
      ).status,
    ).toBe(400);
    expect((await request(t.app).post('/api/auth/verify-email').send({ token })).status).toBe(200);
  });

  test('a link of a deactivated user -> 400', async () => {
    const user = await makeUser(t);
    const token = await forgotPasswordLink(user.email);
    await t.db('users').where({ id: user.id }).update({ is_active: false });
    expect((await request(t.app).post('/api/auth/verify-email').send({ token })).status).toBe(400);
    expect((await request(t.app).post('/api/auth/set-password').send({ token, password: 'new-secret-1' })).status).toBe(400);
  });

  test('of 8 concurrent set-password calls with one link exactly one succeeds', async () => {
    const user = await makeUser(t);
    const token = await forgotPasswordLink(user.email);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        request(t.app)
          .post('/api/auth/set-password')
          .send({ token, password: `parallel-${i}-secret` }),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 400)).toHaveLength(7);
  });
});

describe('forgot-password and resend answer the same for known and unknown addresses', () => {
  test('POST /api/auth/forgot-password: same status and body; only the known address gets a set-password mail', async () => {
    const known = await makeUser(t);
    const unknown = uniqueEmail('nobody');
    const a = await request(t.app).post('/api/auth/forgot-password').send({ email: known.email.toUpperCase() });
    const b = await request(t.app).post('/api/auth/forgot-password').send({ email: unknown });
    expect(a.status).toBe(202);
    expect(b.status).toBe(a.status);
    expect(b.body).toEqual(a.body);
    expect(a.body).toEqual({ success: true });
    await t.ctx.mailer.idle();
    expect(smtp.mailsTo(unknown)).toHaveLength(0);
    const mails = smtp.mailsTo(known.email);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.subject).toBe('Reset your service-sso password');
    linkIn(mails[0]!, '/set-password');
  });

  test('POST /api/auth/verify-email/resend: same status and body; only the unverified known address gets a mail', async () => {
    const known = await makeUser(t, { emailVerified: false });
    const unknown = uniqueEmail('nobody');
    const a = await request(t.app).post('/api/auth/verify-email/resend').send({ email: known.email });
    const b = await request(t.app).post('/api/auth/verify-email/resend').send({ email: unknown });
    expect(a.status).toBe(202);
    expect(b.status).toBe(a.status);
    expect(b.body).toEqual(a.body);
    await t.ctx.mailer.idle();
    expect(smtp.mailsTo(unknown)).toHaveLength(0);
    const mails = smtp.mailsTo(known.email);
    expect(mails).toHaveLength(1);
    const { token } = linkIn(mails[0]!, '/verify-email');
    expect((await request(t.app).post('/api/auth/verify-email').send({ token })).body.purpose).toBe('verify_email');
  });

  test('resend to an already verified or deactivated address sends nothing but answers the same', async () => {
    const verified = await makeUser(t, { emailVerified: true });
    const inactive = await makeUser(t, { emailVerified: false, isActive: false });
    for (const email of [verified.email, inactive.email]) {
      const res = await request(t.app).post('/api/auth/verify-email/resend').send({ email });
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ success: true });
    }
    await t.ctx.mailer.idle();
    expect(smtp.mailsTo(verified.email)).toHaveLength(0);
    expect(smtp.mailsTo(inactive.email)).toHaveLength(0);
  });

  test('a malformed address is a 400 validation_error either way', async () => {
    const res = await request(t.app).post('/api/auth/forgot-password').send({ email: 'not-an-address' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
  });

  test(`anonymous requests mint at most ${MAX_ANONYMOUS_LINKS_PER_HOUR} links per hour for one address`, async () => {
    const user = await makeUser(t);
    for (let i = 0; i < MAX_ANONYMOUS_LINKS_PER_HOUR + 2; i++) {
      expect((await request(t.app).post('/api/auth/forgot-password').send({ email: user.email })).status).toBe(202);
    }
    await t.ctx.mailer.idle();
    expect(smtp.mailsTo(user.email)).toHaveLength(MAX_ANONYMOUS_LINKS_PER_HOUR);
    t.clock.advance(3601);
    await request(t.app).post('/api/auth/forgot-password').send({ email: user.email });
    await t.ctx.mailer.idle();
    expect(smtp.mailsTo(user.email)).toHaveLength(MAX_ANONYMOUS_LINKS_PER_HOUR + 1);
  });

  test('reset link: sets the password, revokes every session, clears the login lock, burns older links', async () => {
    const user = await makeUser(t);
    const session = await signIn(t, user);
    const older = await forgotPasswordLink(user.email);
    const token = await forgotPasswordLink(user.email);
    for (let i = 0; i < 10; i++) await request(t.app).post('/api/auth/login').send({ email: user.email, password: 'wrong-guess' });
    expect((await request(t.app).post('/api/auth/login').send({ email: user.email, password: user.password })).status).toBe(429);

    const res = await request(t.app).post('/api/auth/set-password').send({ token, password: 'reset-secret-1' });
    expect(res.status).toBe(200);
    expect((await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${session.accessToken}`)).status).toBe(401);
    expect((await request(t.app).post('/api/auth/verify-email').send({ token: older })).status).toBe(400);
    expect((await request(t.app).post('/api/auth/login').send({ email: user.email, password: 'reset-secret-1' })).status).toBe(200);
  });
});

describe('mail delivery failure', () => {
  test('an unreachable SMTP server never fails the request', async () => {
    const down = await startSmtpServer();
    const url = down.url;
    await down.close();
    const t2 = await createTestApp({ mailer: 'smtp', env: { SMTP_URL: url } });
    try {
      const user = await makeUser(t2);
      const res = await request(t2.app).post('/api/auth/forgot-password').send({ email: user.email });
      expect(res.status).toBe(202);
      await t2.ctx.mailer.idle();
      expect(await t2.db('email_tokens').where({ user_id: user.id }).count({ n: '*' })).toEqual([{ n: '1' }]);
    } finally {
      await t2.close();
    }
  });
});

import request from 'supertest';
import { makeUser } from '../helpers/factories';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Sign-in by email against cookie tossing (docs/security.md): a sibling subdomain can plant a plain cookie for the
 * parent domain in a victim's browser. With COOKIE_SECURE the browser binding is a `__Host-` cookie that only this host
 * can set, minted anew for every request (an incoming value is never reused): an attacker who asks for a sign-in to
 * their own account and plants any value they know in the victim's browser gets the confirmation page, never a
 * silent sign-in. Supertest speaks http, so the Secure cookies are carried by hand, as a browser would over https.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { COOKIE_SECURE: 'true', COOKIE_DOMAIN: 'sso.test' } });
});
afterAll(async () => {
  await t.close();
});

const setCookies = (res: request.Response): string[] => {
  const raw = res.headers['set-cookie'] as unknown;
  return Array.isArray(raw) ? (raw as string[]) : [];
};
const bindingOf = (res: request.Response) => {
  const line = setCookies(res).find((c) => c.startsWith('__Host-email_sign_in='));
  return line ? { line, value: /^__Host-email_sign_in=([^;]*)/.exec(line)![1]! } : undefined;
};
function lastLink(email: string): string {
  const mail = t.mails.filter((m) => m.to === email).pop()!;
  return /\/login\/email\?token=([\w-]+)/.exec(mail.text)![1]!;
}

test('the browser that asked holds a new __Host- cookie (Secure, Path=/, no Domain) and its link signs it in at once', async () => {
  const user = await makeUser(t);
  const asked = await request(t.app).post('/api/auth/login/email').send({ email: user.email });
  expect(asked.status).toBe(202);
  const binding = bindingOf(asked);
  expect(binding).toBeDefined();
  expect(binding!.value).toMatch(/^[\w-]{43}$/);
  expect(binding!.line).toMatch(/; Secure/);
  expect(binding!.line).toMatch(/; Path=\//);
  expect(binding!.line).not.toMatch(/Domain=/i);
  expect(setCookies(asked).some((c) => c.startsWith('email_sign_in='))).toBe(false);

  const opened = await request(t.app)
    .get(`/login/email?token=${lastLink(user.email)}`)
    .set('Cookie', `__Host-email_sign_in=${binding!.value}`);
  expect(opened.status).toBe(303);
  const session = setCookies(opened).find((c) => c.startsWith('accessToken='))!;
  const me = await request(t.app).get('/api/auth/me').set('Cookie', session.split(';')[0]!);
  expect(me.body.user.email).toBe(user.email);
});

test('an incoming value is never reused: the attacker asking with a chosen value gets a different one', async () => {
  const attacker = await makeUser(t);
  const chosen = 'A'.repeat(43);
  const asked = await request(t.app)
    .post('/api/auth/login/email')
    .set('Cookie', `email_sign_in=${chosen}; __Host-email_sign_in=${chosen}`)
    .send({ email: attacker.email });
  expect(asked.status).toBe(202);
  expect(bindingOf(asked)!.value).not.toBe(chosen);
});

test('cookie tossing: the victim opening the attacker’s link with planted values gets the confirmation page, no session', async () => {
  const attacker = await makeUser(t);
  const chosen = 'B'.repeat(43);
  // The attacker asks from their own client (choosing any cookie they like) and learns the value set for it.
  const asked = await request(t.app)
    .post('/api/auth/login/email')
    .set('Cookie', `email_sign_in=${chosen}; __Host-email_sign_in=${chosen}`)
    .send({ email: attacker.email });
  const known = bindingOf(asked)!.value;
  const token = lastLink(attacker.email);
  // A sibling subdomain can plant only plain cookies (a browser refuses a __Host- cookie with a Domain): both values,
  // and a name that only percent-decoding would turn into the prefixed one.
  for (const planted of [`email_sign_in=${chosen}`, `email_sign_in=${known}`, `__%48ost-email_sign_in=${known}`]) {
    const opened = await request(t.app).get(`/login/email?token=${token}`).set('Cookie', planted);
    expect(opened.status).toBe(200);
    expect(opened.text).toContain('Sign in on this device?');
    expect(opened.text).toContain(attacker.email);
    expect(setCookies(opened).some((c) => c.startsWith('accessToken=') || c.startsWith('refreshToken='))).toBe(false);
  }
  // The link was not spent by being opened: its owner can still use it in the browser that asked.
  const owner = await request(t.app).get(`/login/email?token=${token}`).set('Cookie', `__Host-email_sign_in=${known}`);
  expect(owner.status).toBe(303);
});

test('the form on /login sets the same __Host- binding', async () => {
  const user = await makeUser(t);
  const login = await request(t.app).get('/login');
  const csrfCookie = setCookies(login)
    .find((c) => c.startsWith('csrf='))!
    .split(';')[0]!;
  const csrf = /name="csrf" value="([^"]+)"/.exec(login.text)![1]!;
  const sent = await request(t.app)
    .post('/login/email')
    .set('Cookie', `${csrfCookie}; __Host-email_sign_in=${'C'.repeat(43)}`)
    .type('form')
    .send({ csrf, email: user.email });
  expect(sent.status).toBe(200);
  const binding = bindingOf(sent)!;
  expect(binding.value).not.toBe('C'.repeat(43));
  const opened = await request(t.app)
    .get(`/login/email?token=${lastLink(user.email)}`)
    .set('Cookie', `__Host-email_sign_in=${binding.value}`);
  expect(opened.status).toBe(303);
});

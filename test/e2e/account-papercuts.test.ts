import { makeSignedInUser } from '../helpers/factories';
import { csrfFrom } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * /account for a person without a password (docs/self-service.md): offered a set-password link by email, never asked
 * for a "current password"; the sessions table keeps an IP address and a button's words unbroken.
 */
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

test('without a password: "Email me a link to set a password", no current-password field; the link is mailed', async () => {
  const s = await makeSignedInUser(t);
  await t.db('users').where({ id: s.user.id }).update({ password_hash: null });
  const page = await s.agent.get('/account');
  expect(page.status).toBe(200);
  expect(page.text).toContain('Email me a link to set a password');
  expect(page.text).not.toContain('name="current_password"');
  const de = await s.agent.get('/account').set('Accept-Language', 'de');
  expect(de.text).toContain('Link zum Festlegen eines Passworts senden');
  const csrf = await csrfFrom(s.agent, '/account');
  const before = t.mails.length;
  const res = await s.agent.post('/forgot-password').type('form').send({ csrf, email: s.user.email });
  expect(res.status).toBe(303);
  expect(res.headers.location).toBe('/forgot-password?sent=1');
  await t.ctx.events.idle?.();
  const mail = t.mails.slice(before).find((m) => m.to === s.user.email);
  expect(mail?.text).toMatch(/\/set-password\?token=/);
});

test('with a password: the change form asks for the current one; the IP cell never breaks', async () => {
  const s = await makeSignedInUser(t);
  const page = await s.agent.get('/account');
  expect(page.text).toContain('name="current_password"');
  expect(page.text).not.toContain('Email me a link to set a password');
  expect(page.text).toMatch(/<td data-label="IP address" class="nowrap">/);
});

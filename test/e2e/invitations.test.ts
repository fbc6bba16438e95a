import request from 'supertest';
import { makeSignedInUser, uniqueEmail } from '../helpers/factories';
import { csrfFrom } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Invitations (docs/rbac.md, "Invitations"): an invited person is "invited" (API) / "Invited" (console) until they
 * set a password, the link is valid invitation_ttl_hours (which the mail states), and the invitation can be sent again
 * (earlier links stop working).
 */
let t: TestApp;
let admin: string;

beforeAll(async () => {
  t = await createTestApp();
  admin = (await makeSignedInUser(t, ['super_admin'])).bearer;
});
afterAll(async () => {
  await t?.close();
});

const api = () => request(t.app);
const lastMailTo = (email: string) => [...t.mails].reverse().find((m) => m.to === email)!;
const tokenIn = (text: string) => /set-password\?token=([A-Za-z0-9_-]+)/.exec(text)![1]!;

async function invite(email = uniqueEmail('invitee')) {
  const res = await api().post('/api/users').set('Authorization', admin).send({ email, first_name: 'Ivy', last_name: 'Invited' });
  expect(res.status).toBe(201);
  await t.ctx.mailer.idle?.();
  return { email, user: res.body.user as { id: string; status: string; invitation_expires_at: string | null } };
}

test('an invited person is "invited" until the password is set; the mail states the validity (72 hours by default)', async () => {
  const { email, user } = await invite();
  expect(user.status).toBe('invited');
  const expires = new Date(user.invitation_expires_at!).getTime();
  expect(Math.abs(expires - (t.clock.now().getTime() + 72 * 3600_000))).toBeLessThan(60_000);
  const mail = lastMailTo(email);
  expect(mail.text).toContain('This invitation is valid for 72 hours.');

  const listed = await api().get('/api/users').query({ search: email }).set('Authorization', admin);
  expect(listed.body.users.find((u: { id: string }) => u.id === user.id).status).toBe('invited');

  const set = await api()
    .post('/api/auth/set-password')
    .send({ token: tokenIn(mail.text), password: 'chosen-password-1' });
  expect(set.status).toBe(200);
  const after = await api().get(`/api/users/${user.id}`).set('Authorization', admin);
  expect(after.body.user).toMatchObject({ status: 'active', invitation_expires_at: null });
  // Nothing to resend any more.
  const resend = await api().post(`/api/users/${user.id}/invitation`).set('Authorization', admin);
  expect(resend.status).toBe(409);
});

test('the link works for invitation_ttl_hours, not longer; the setting is read live and the mail says so', async () => {
  await api().patch('/api/admin/settings').set('Authorization', admin).send({ invitation_ttl_hours: 2 }).expect(200);
  try {
    const { email, user } = await invite();
    const mail = lastMailTo(email);
    expect(mail.text).toContain('This invitation is valid for 2 hours.');
    t.clock.advance(2 * 3600 + 60);
    const late = await api()
      .post('/api/auth/set-password')
      .send({ token: tokenIn(mail.text), password: 'chosen-password-1' });
    expect(late.status).toBe(400);
    const detail = await api().get(`/api/users/${user.id}`).set('Authorization', admin);
    expect(detail.body.user.status).toBe('invited');

    // Sent again: a new link, valid from now; it works.
    const resent = await api().post(`/api/users/${user.id}/invitation`).set('Authorization', admin);
    expect(resent.status).toBe(200);
    expect(new Date(resent.body.user.invitation_expires_at).getTime()).toBeGreaterThan(t.clock.now().getTime());
    await t.ctx.mailer.idle?.();
    const again = lastMailTo(email);
    expect(tokenIn(again.text)).not.toBe(tokenIn(mail.text));
    const ok = await api()
      .post('/api/auth/set-password')
      .send({ token: tokenIn(again.text), password: 'chosen-password-1' });
    expect(ok.status).toBe(200);
    const audit = await t.db('audit_events').where({ type: 'user.invitation_resent', subject_id: user.id });
    expect(audit).toHaveLength(1);
  } finally {
    await api().patch('/api/admin/settings').set('Authorization', admin).send({ invitation_ttl_hours: 72 }).expect(200);
  }
});

test('resending makes the earlier link stop working', async () => {
  const { email, user } = await invite();
  const first = tokenIn(lastMailTo(email).text);
  await api().post(`/api/users/${user.id}/invitation`).set('Authorization', admin).expect(200);
  await t.ctx.mailer.idle?.();
  const old = await api().post('/api/auth/set-password').send({ token: first, password: 'chosen-password-1' });
  expect(old.status).toBe(400);
  expect((await api().post('/api/users/00000000-0000-4000-8000-000000000000/invitation').set('Authorization', admin)).status).toBe(404);
});

test('the console lists "Invited" (not "Active"), shows the validity and resends; German too', async () => {
  const s = await makeSignedInUser(t, ['super_admin']);
  const csrf = await csrfFrom(s.agent, '/admin/users');
  const { email, user } = await invite();
  const list = await s.agent.get('/admin/users').query({ q: email });
  const body = list.text.slice(list.text.indexOf('<tbody'));
  const row = body.slice(body.indexOf(email));
  expect(row.slice(0, row.indexOf('</tr>'))).toContain('<span class="badge invited">Invited</span>');
  expect(row.slice(0, row.indexOf('</tr>'))).not.toContain('>Active<');
  const detail = await s.agent.get(`/admin/users/${user.id}`);
  expect(detail.text).toContain('Invitation link valid until');
  expect(detail.text).toContain('Resend invitation');
  const before = t.mails.length;
  const resent = await s.agent.post(`/admin/users/${user.id}/invitation`).type('form').send({ csrf });
  expect(resent.status).toBe(303);
  const page = await s.agent.get(resent.headers.location as string);
  expect(page.text).toContain(`Invitation sent again to ${email}.`);
  await t.ctx.mailer.idle?.();
  expect(t.mails.slice(before).some((m) => m.to === email)).toBe(true);
  const german = await s.agent.get(`/admin/users/${user.id}`).set('Accept-Language', 'de');
  expect(german.text).toContain('<span class="badge invited">Eingeladen</span>');
  expect(german.text).toContain('Einladung erneut senden');
});

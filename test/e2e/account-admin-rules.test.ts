import request from 'supertest';
import { makeClient, makeSignedInUser, makeUser, uniqueEmail } from '../helpers/factories';
import { makeRole, makeUserWithPermissions } from '../helpers/rbac';
import { createTestApp, type TestApp } from '../helpers/test-app';

let t: TestApp;
const api = () => request(t.app);

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

/** Mints a set-password link for the user through forgot-password; returns its raw token. */
async function mailedSetPasswordToken(email: string): Promise<string> {
  await api().post('/api/auth/forgot-password').send({ email }).expect(202);
  const mail = [...t.mails].reverse().find((m) => m.to === email && m.text.includes('/set-password?token='));
  if (!mail) throw new Error('no set-password mail');
  return new URL(/https?:\/\/\S+\/set-password\?token=\S+/.exec(mail.text)![0]).searchParams.get('token')!;
}

describe("PUT /api/users/:id > changing another account's email needs strictly more rights than every role it holds (CONTRACT §8)", () => {
  test('a manager cannot change the email of a peer manager', async () => {
    const manager = await makeSignedInUser(t, ['manager']);
    const peer = await makeUser(t, { roles: ['manager'] });
    const res = await api()
      .put(`/api/users/${peer.id}`)
      .set('Authorization', manager.bearer)
      .send({ email: uniqueEmail('grab') });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('forbidden');
    expect((await t.db('users').where({ id: peer.id }).first()).email).toBe(peer.email);
  });

  test("a role with exactly the actor's permissions counts as a peer", async () => {
    const actor = await makeUserWithPermissions(t, ['users:read', 'users:write']);
    const target = await makeUser(t);
    await t.db('user_roles').insert({ user_id: target.id, role_id: actor.role.id });
    const res = await api()
      .put(`/api/users/${target.id}`)
      .set('Authorization', actor.bearer)
      .send({ email: uniqueEmail('grab') });
    expect(res.status).toBe(403);
  });

  test('a deactivated admin role still counts: the manager cannot take the account over', async () => {
    const manager = await makeSignedInUser(t, ['manager']);
    const target = await makeUser(t);
    const dormant = await makeRole(t, { permissions: ['users:read', 'users:write', 'users:delete'], isActive: false });
    await t.db('user_roles').insert({ user_id: target.id, role_id: dormant.id });
    const res = await api()
      .put(`/api/users/${target.id}`)
      .set('Authorization', manager.bearer)
      .send({ email: uniqueEmail('grab') });
    expect(res.status).toBe(403);
    // A profile edit (not a takeover) is still allowed: the role is inactive and grants nothing today.
    await api().put(`/api/users/${target.id}`).set('Authorization', manager.bearer).send({ first_name: 'Renamed' }).expect(200);
  });

  test('an application-scoped admin role counts too', async () => {
    const manager = await makeSignedInUser(t, ['manager']);
    const target = await makeUser(t);
    const appAdmin = await makeRole(t, { name: 'admin', application: 'payroll' });
    await t.db('user_roles').insert({ user_id: target.id, role_id: appAdmin.id });
    const res = await api()
      .put(`/api/users/${target.id}`)
      .set('Authorization', manager.bearer)
      .send({ email: uniqueEmail('grab') });
    expect(res.status).toBe(403);
  });

  test("an admin may change a manager's email: the old address is told, outstanding links stop working", async () => {
    const admin = await makeSignedInUser(t, ['admin']);
    const target = await makeUser(t, { roles: ['manager'] });
    const token = await mailedSetPasswordToken(target.email);
    const newEmail = uniqueEmail('moved');
    const res = await api().put(`/api/users/${target.id}`).set('Authorization', admin.bearer).send({ email: newEmail });
    expect(res.status).toBe(200);
    expect(res.body.user.email).toBe(newEmail);
    const notice = t.mails.find((m) => m.to === target.email && m.subject === 'The email address of your account was changed');
    expect(notice?.text).toContain(newEmail);
    expect(notice?.text).not.toMatch(/token=/);
    const burned = await api().post('/api/auth/set-password').send({ token, password: 'hijacked-pass-1' });
    expect(burned.status).toBe(400);
  });

  test("a super_admin account's email can be changed by nobody through the API (no role is above it)", async () => {
    const boss = await makeSignedInUser(t, ['super_admin']);
    const other = await makeUser(t, { roles: ['super_admin'] });
    const res = await api()
      .put(`/api/users/${other.id}`)
      .set('Authorization', boss.bearer)
      .send({ email: uniqueEmail('grab') });
    expect(res.status).toBe(403);
  });

  test("one's own email stays editable through the admin API", async () => {
    const manager = await makeSignedInUser(t, ['manager']);
    const res = await api()
      .put(`/api/users/${manager.user.id}`)
      .set('Authorization', manager.bearer)
      .send({ email: uniqueEmail('self') });
    expect(res.status).toBe(200);
  });
});

describe('re-activation needs users:delete and strictly more rights (CONTRACT §8)', () => {
  test('a users:write holder cannot re-activate anybody', async () => {
    const manager = await makeSignedInUser(t, ['manager']);
    const target = await makeUser(t, { isActive: false });
    const res = await api().put(`/api/users/${target.id}`).set('Authorization', manager.bearer).send({ is_active: true });
    expect(res.status).toBe(403);
    expect((await t.db('users').where({ id: target.id }).first()).is_active).toBe(false);
  });

  test('an admin cannot re-activate a deactivated peer admin, but can re-activate a plain user', async () => {
    const admin = await makeSignedInUser(t, ['admin']);
    const peer = await makeUser(t, { roles: ['admin'], isActive: false });
    expect((await api().put(`/api/users/${peer.id}`).set('Authorization', admin.bearer).send({ is_active: true })).status).toBe(403);
    const plain = await makeUser(t, { isActive: false });
    const res = await api().put(`/api/users/${plain.id}`).set('Authorization', admin.bearer).send({ is_active: true });
    expect(res.status).toBe(200);
    expect(res.body.user.is_active).toBe(true);
  });
});

describe("deactivation burns the user's email links (CONTRACT §8)", () => {
  test('a set-password link mailed before deactivation no longer works, even after re-activation', async () => {
    const admin = await makeSignedInUser(t, ['admin']);
    const target = await makeUser(t);
    const token = await mailedSetPasswordToken(target.email);
    await api().delete(`/api/users/${target.id}`).set('Authorization', admin.bearer).expect(200);
    await api().put(`/api/users/${target.id}`).set('Authorization', admin.bearer).send({ is_active: true }).expect(200);
    const res = await api().post('/api/auth/set-password').send({ token, password: 'late-link-pass-1' });
    expect(res.status).toBe(400);
  });
});

describe('names are one line, no control characters, at most 100 characters (CONTRACT §8)', () => {
  const BAD_NAMES = [
    'Eve\nClick https://evil.test',
    'Eve\r\nBcc: x@y',
    'Eve\u0000',
    'Eve\u0007',
    'Eve\u2028line',
    'Eve\u202Egnp.exe',
    'x'.repeat(101),
  ];

  test.each(BAD_NAMES.map((n) => [JSON.stringify(n).slice(0, 30), n]))('register refuses %s', async (_label, name) => {
    const res = await api()
      .post('/api/auth/register')
      .send({ first_name: name, last_name: 'L', email: uniqueEmail('n'), password: 'good-pass-1' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
    expect(res.body.details[0].path).toBe('first_name');
    expect(t.mails.some((m) => m.text.includes('Click https://evil.test'))).toBe(false);
  });

  test('PUT /me, invite, admin update and client create/update refuse a two-line name', async () => {
    const admin = await makeSignedInUser(t, ['super_admin']);
    const user = await makeUser(t);
    const client = await makeClient(t);
    const bad = 'Legit\nSecond line';
    const responses = await Promise.all([
      api().put('/api/auth/me').set('Authorization', admin.bearer).send({ last_name: bad }),
      api()
        .post('/api/users')
        .set('Authorization', admin.bearer)
        .send({ email: uniqueEmail('inv'), first_name: bad, last_name: 'L' }),
      api().put(`/api/users/${user.id}`).set('Authorization', admin.bearer).send({ first_name: bad }),
      api()
        .post('/api/admin/oauth-clients')
        .set('Authorization', admin.bearer)
        .send({ name: bad, redirect_uri: 'https://app.test/cb', scopes: 'openid' }),
      api().put(`/api/admin/oauth-clients/${client.clientId}`).set('Authorization', admin.bearer).send({ name: bad }),
    ]);
    for (const res of responses) {
      expect({ status: res.status, error: res.body.error }).toEqual({ status: 400, error: 'validation_error' });
    }
    expect((await t.db('users').where({ id: user.id }).first()).first_name).toBe(user.firstName);
    expect((await t.db('oauth_clients').where({ client_id: client.clientId }).first()).name).toBe(client.name);
  });

  test('100 characters (code points, emoji included) and inner spaces are fine', async () => {
    const name = `${'é'.repeat(50)}${'🙂'.repeat(48)} `;
    const res = await api()
      .post('/api/auth/register')
      .send({ first_name: 'Anne Marie', last_name: `${name}x`, email: uniqueEmail('ok'), password: 'good-pass-1' });
    expect(res.status).toBe(201);
    expect(res.body.user.first_name).toBe('Anne Marie');
  });
});

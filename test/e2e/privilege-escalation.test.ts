import request from 'supertest';
import { ensureSuperAdmin } from '../../src/services/bootstrap.service';
import { makeSignedInUser, makeUser, signIn, uniqueEmail } from '../helpers/factories';
import { makeRole, makeUserWithPermissions, roleIdByName } from '../helpers/rbac';
import { createTestApp, type TestApp } from '../helpers/test-app';

let t: TestApp;
const api = () => request(t.app);

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

async function globalRoleNamesOf(userId: string): Promise<string[]> {
  const rows = await t
    .db('user_roles as ur')
    .join('roles as r', 'r.id', 'ur.role_id')
    .where('ur.user_id', userId)
    .whereNull('r.application');
  return rows.map((r: { name: string }) => r.name).sort();
}

describe('users:write cannot take over an account with more rights than the actor', () => {
  test("a manager cannot change an admin's email (then reset its password through forgot-password)", async () => {
    const manager = await makeSignedInUser(t, ['manager']);
    const admin = await makeUser(t, { roles: ['admin'] });
    const res = await api()
      .put(`/api/users/${admin.id}`)
      .set('Authorization', manager.bearer)
      .send({ email: uniqueEmail('attacker') });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('forbidden');
    expect((await t.db('users').where({ id: admin.id }).first()).email).toBe(admin.email);
  });

  test('a holder of users:write alone cannot change a user who holds oauth_clients:write', async () => {
    const writer = await makeUserWithPermissions(t, ['users:write']);
    const target = await makeUserWithPermissions(t, ['oauth_clients:write']);
    const res = await api().put(`/api/users/${target.user.id}`).set('Authorization', writer.bearer).send({ first_name: 'Owned' });
    expect(res.status).toBe(403);
    expect((await t.db('users').where({ id: target.user.id }).first()).first_name).toBe('Test');
  });

  test('peers and lesser accounts can still be managed', async () => {
    const manager = await makeSignedInUser(t, ['manager']);
    const peer = await makeUser(t, { roles: ['manager'] });
    const plain = await makeUser(t);
    expect((await api().put(`/api/users/${peer.id}`).set('Authorization', manager.bearer).send({ first_name: 'Peer' })).status).toBe(200);
    expect((await api().put(`/api/users/${plain.id}`).set('Authorization', manager.bearer).send({ first_name: 'Plain' })).status).toBe(200);
  });
});

describe('users:manage_roles cannot grant more than the actor holds', () => {
  test('a holder of users:manage_roles alone cannot make themselves admin', async () => {
    const granter = await makeUserWithPermissions(t, ['users:manage_roles']);
    const res = await api().post(`/api/rbac/users/${granter.user.id}/roles`).set('Authorization', granter.bearer).send({ role: 'admin' });
    expect(res.status).toBe(403);
    expect(await globalRoleNamesOf(granter.user.id)).not.toContain('admin');
    expect((await api().get('/api/admin/summary').set('Authorization', granter.bearer)).status).toBe(403);
  });

  test('nor grant a custom global role carrying permissions they lack (also at invite)', async () => {
    const granter = await makeUserWithPermissions(t, ['users:manage_roles', 'users:write']);
    const powerful = await makeRole(t, { permissions: ['oauth_clients:write', 'users:delete'] });
    const res = await api().post(`/api/users/${granter.user.id}/roles`).set('Authorization', granter.bearer).send({ role_id: powerful.id });
    expect(res.status).toBe(403);
    expect(await globalRoleNamesOf(granter.user.id)).not.toContain(powerful.name);

    const email = uniqueEmail('invite');
    const invite = await api()
      .post('/api/users')
      .set('Authorization', granter.bearer)
      .send({ email, first_name: 'In', last_name: 'Vite', role_ids: [powerful.id] });
    expect(invite.status).toBe(403);
    expect(await t.db('users').where({ email }).first()).toBeUndefined();
  });

  test('an admin cannot be stripped of roles by a lesser role manager', async () => {
    const granter = await makeUserWithPermissions(t, ['users:manage_roles']);
    const admin = await makeUser(t, { roles: ['admin'] });
    const adminRole = await roleIdByName(t, 'admin');
    const res = await api().delete(`/api/rbac/users/${admin.id}/roles/${adminRole}`).set('Authorization', granter.bearer);
    expect(res.status).toBe(403);
    expect(await globalRoleNamesOf(admin.id)).toContain('admin');
  });

  test("roles within the actor's rights are still grantable", async () => {
    const granter = await makeUserWithPermissions(t, ['users:manage_roles', 'users:read']);
    const reader = await makeRole(t, { permissions: ['users:read'] });
    const target = await makeUser(t);
    const res = await api().post(`/api/users/${target.id}/roles`).set('Authorization', granter.bearer).send({ role_id: reader.id });
    expect(res.status).toBe(201);
    const admin = await makeSignedInUser(t, ['admin']);
    expect((await api().post(`/api/users/${target.id}/roles`).set('Authorization', admin.bearer).send({ role: 'admin' })).status).toBe(201);
  });
});

describe('email links after a password change', () => {
  test('an outstanding verification link no longer sets the password once the password was changed', async () => {
    const email = uniqueEmail('reg');
    const reg = await api().post('/api/auth/register').send({ first_name: 'A', last_name: 'B', email, password: 'first-pass-1' });
    expect(reg.status).toBe(201);
    const mail = t.mails.find((m) => m.to === email)!;
    const token = /token=([A-Za-z0-9_-]+)/.exec(mail.text)![1]!;

    const changed = await api()
      .post('/api/auth/change-password')
      .set('Authorization', `Bearer ${reg.body.accessToken}`)
      .send({ current_password: 'first-pass-1', new_password: 'second-pass-2' });
    expect(changed.status).toBe(200);

    const hijack = await api().post('/api/auth/set-password').send({ token, password: 'attacker-pass-3' });
    expect(hijack.status).toBe(400);
    expect((await api().post('/api/auth/login').send({ email, password: 'second-pass-2' })).status).toBe(200);
    expect((await api().post('/api/auth/login').send({ email, password: 'attacker-pass-3' })).status).toBe(401);
  });
});

describe('boot-time bootstrap admin only ever creates (CONTRACT §8)', () => {
  test('no account with that email: a verified super_admin is created', async () => {
    const email = uniqueEmail('fresh-boss');
    const result = await ensureSuperAdmin(t.ctx, { email, password: 'operator-chosen-pass' });
    expect(result).toMatchObject({ created: true, promoted: true });
    const row = await t.db('users').where({ email }).first();
    expect(row).toMatchObject({ email_verified: true, is_active: true });
    expect(await globalRoleNamesOf(row.id)).toEqual(['super_admin']);
    await api().post('/api/auth/login').send({ email, password: 'operator-chosen-pass' }).expect(200);
  });

  test('an existing verified, active account is NOT promoted (a users:write holder pointed its email there) and keeps its password', async () => {
    const owner = await makeSignedInUser(t);
    const before = await t.db('users').where({ id: owner.user.id }).first();
    const result = await ensureSuperAdmin(t.ctx, { email: owner.user.email, password: 'not-applied-pass' });
    expect(result).toMatchObject({ created: false, promoted: false });
    expect(await globalRoleNamesOf(owner.user.id)).toEqual([]);
    expect(await t.db('users').where({ id: owner.user.id }).first()).toEqual(before);
    const me = await api().get('/api/auth/me').set('Authorization', owner.bearer);
    expect(me.body.user.roles).toEqual([]);
    await api().post('/api/auth/login').send({ email: owner.user.email, password: owner.user.password }).expect(200);
    await api().post('/api/auth/login').send({ email: owner.user.email, password: 'not-applied-pass' }).expect(401);
  });

  test('a manager who moves their own address to BOOTSTRAP_ADMIN_EMAIL gains nothing at the next start', async () => {
    const manager = await makeSignedInUser(t, ['manager']);
    const target = uniqueEmail('bootstrap-target');
    await t.db('users').where({ id: manager.user.id }).update({ email: target });
    await ensureSuperAdmin(t.ctx, { email: target, password: 'operator-chosen-pass' });
    expect(await globalRoleNamesOf(manager.user.id)).toEqual(['manager']);
  });

  test('a deactivated account with that address stays deactivated and unpromoted', async () => {
    const user = await makeUser(t, { isActive: false });
    const result = await ensureSuperAdmin(t.ctx, { email: user.email, password: 'operator-chosen-pass' });
    expect(result.promoted).toBe(false);
    const row = await t.db('users').where({ id: user.id }).first();
    expect(row.is_active).toBe(false);
    expect(await globalRoleNamesOf(user.id)).toEqual([]);
  });

  test('an existing self-registered, unverified account with that address is not promoted, verified or reactivated', async () => {
    const email = uniqueEmail('bootstrap');
    const reg = await api().post('/api/auth/register').send({ first_name: 'Squat', last_name: 'Ter', email, password: 'squatter-pass' });
    expect(reg.status).toBe(201);

    await ensureSuperAdmin(t.ctx, { email, password: 'operator-chosen-pass' });

    const row = await t.db('users').where({ email }).first();
    expect(row.email_verified).toBe(false);
    expect(await globalRoleNamesOf(row.id)).toEqual([]);
    const me = await api().get('/api/auth/me').set('Authorization', `Bearer ${reg.body.accessToken}`);
    expect(me.body.user.roles).toEqual([]);
  });

  test('the CLI (resetPassword) still promotes an existing account and sets the given password', async () => {
    const squatter = await makeSignedInUser(t);
    const user = squatter.user;
    await ensureSuperAdmin(t.ctx, { email: user.email, password: 'cli-chosen-pass', resetPassword: true });
    expect(await globalRoleNamesOf(user.id)).toEqual(['super_admin']);
    // A session opened under the old password does not inherit super_admin.
    expect((await api().get('/api/users').set('Authorization', squatter.bearer)).status).toBe(401);
    expect((await api().post('/api/auth/login').send({ email: user.email, password: 'cli-chosen-pass' })).status).toBe(200);
  });
});

describe('login CSRF: a cross-site form cannot sign the browser into another account', () => {
  test('a form-encoded login or register from an unlisted Origin -> 403 and no cookies', async () => {
    const user = await makeUser(t);
    const login = await api()
      .post('/api/auth/login')
      .set('Origin', 'https://evil.test')
      .type('form')
      .send({ email: user.email, password: user.password });
    expect(login.status).toBe(403);
    expect(login.headers['set-cookie']).toBeUndefined();

    const email = uniqueEmail('csrf');
    const register = await api()
      .post('/api/auth/register')
      .set('Origin', 'null')
      .type('form')
      .send({ first_name: 'A', last_name: 'B', email, password: 'attacker-pass' });
    expect(register.status).toBe(403);
    expect(await t.db('users').where({ email }).first()).toBeUndefined();

    const { refreshToken } = await signIn(t, user);
    const refresh = await api().post('/api/auth/refresh-token').set('Origin', 'https://evil.test').type('form').send({ refreshToken });
    expect(refresh.status).toBe(403);
    expect(refresh.headers['set-cookie']).toBeUndefined();
  });

  test('our own origin, an allow-listed origin and clients without Origin still sign in', async () => {
    const user = await makeUser(t);
    for (const origin of ['http://sso.test', 'https://portal.test', undefined]) {
      const req = api().post('/api/auth/login');
      if (origin) req.set('Origin', origin);
      expect((await req.send({ email: user.email, password: user.password })).status).toBe(200);
    }
  });
});

describe('email links after an admin changes the address', () => {
  test('an invite link mailed to a mistyped address stops working once the admin corrects the email', async () => {
    const admin = await makeSignedInUser(t, ['admin']);
    const wrong = uniqueEmail('typo');
    const invite = await api()
      .post('/api/users')
      .set('Authorization', admin.bearer)
      .send({ email: wrong, first_name: 'Bob', last_name: 'B' });
    expect(invite.status).toBe(201);
    const token = /token=([A-Za-z0-9_-]+)/.exec(t.mails.find((m) => m.to === wrong)!.text)![1]!;

    const right = uniqueEmail('right');
    expect((await api().put(`/api/users/${invite.body.user.id}`).set('Authorization', admin.bearer).send({ email: right })).status).toBe(
      200,
    );

    expect((await api().post('/api/auth/set-password').send({ token, password: 'typo-owner-pass' })).status).toBe(400);
    expect((await t.db('users').where({ id: invite.body.user.id }).first()).password_hash).toBeNull();
  });
});

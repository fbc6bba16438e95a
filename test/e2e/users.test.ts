import { ensureSuperAdmin } from '../../src/services/bootstrap.service';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { makeSignedInUser, makeUser, signIn, uniqueEmail } from '../helpers/factories';
import { makeRole, makeUserWithPermissions, roleIdByName } from '../helpers/rbac';
import { createTestApp, type TestApp } from '../helpers/test-app';

let t: TestApp;
let superAdmin: Awaited<ReturnType<typeof makeSignedInUser>>;

beforeAll(async () => {
  t = await createTestApp();
  superAdmin = await makeSignedInUser(t, ['super_admin']);
});
afterAll(async () => {
  await t.close();
});

const api = () => request(t.app);

async function activeSessionCount(userId: string): Promise<number> {
  const row = await t.db('sessions').where({ user_id: userId }).whereNull('revoked_at').count<{ count: string }[]>('* as count').first();
  return Number(row?.count);
}

describe('GET /api/users', () => {
  let tag: string;
  beforeAll(async () => {
    tag = `pg${randomUUID().slice(0, 6)}`;
    for (let i = 0; i < 7; i++) {
      await makeUser(t, { email: `${tag}-${i}@example.test`, firstName: i === 3 ? 'Grace' : 'Ada', lastName: `Pager${i}` });
      t.clock.advance(1);
    }
  });

  test('pages through the search results with total, page and limit, newest first', async () => {
    const first = await api().get(`/api/users?search=${tag}&page=1&limit=3`).set('Authorization', superAdmin.bearer);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ total: 7, page: 1, limit: 3 });
    expect(first.body.users.map((u: { email: string }) => u.email)).toEqual([
      `${tag}-6@example.test`,
      `${tag}-5@example.test`,
      `${tag}-4@example.test`,
    ]);

    const last = await api().get(`/api/users?search=${tag}&page=3&limit=3`).set('Authorization', superAdmin.bearer);
    expect(last.body).toMatchObject({ total: 7, page: 3, limit: 3 });
    expect(last.body.users.map((u: { email: string }) => u.email)).toEqual([`${tag}-0@example.test`]);

    const beyond = await api().get(`/api/users?search=${tag}&page=9&limit=3`).set('Authorization', superAdmin.bearer);
    expect(beyond.body).toMatchObject({ users: [], total: 7, page: 9 });
  });

  test('search matches email, first name, last name and full name case-insensitively', async () => {
    const byFirst = await api().get(`/api/users?search=GRACE`).set('Authorization', superAdmin.bearer);
    expect(byFirst.body.users.map((u: { email: string }) => u.email)).toContain(`${tag}-3@example.test`);
    const byFull = await api()
      .get(`/api/users?search=${encodeURIComponent('grace pager3')}`)
      .set('Authorization', superAdmin.bearer);
    expect(byFull.body.total).toBe(1);
    const byLast = await api().get(`/api/users?search=pager5`).set('Authorization', superAdmin.bearer);
    expect(byLast.body.users.map((u: { email: string }) => u.email)).toEqual([`${tag}-5@example.test`]);
  });

  test('LIKE wildcards in the search term match literally', async () => {
    const res = await api()
      .get(`/api/users?search=${encodeURIComponent('%')}`)
      .set('Authorization', superAdmin.bearer);
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(0);
    const underscore = await api().get(`/api/users?search=_`).set('Authorization', superAdmin.bearer);
    expect(underscore.body.total).toBe(0);
  });

  test('defaults to page 1, limit 20; a limit above 100 is capped at 100', async () => {
    const plain = await api().get('/api/users').set('Authorization', superAdmin.bearer);
    expect(plain.body).toMatchObject({ page: 1, limit: 20 });
    const capped = await api().get('/api/users?limit=500').set('Authorization', superAdmin.bearer);
    expect(capped.status).toBe(200);
    expect(capped.body.limit).toBe(100);
  });

  test.each(['page=0', 'page=abc', 'limit=0', 'limit=-5', 'limit=2.5', 'page=1&page=2'])(
    'bad query %s -> 400 validation_error',
    async (q) => {
      const res = await api().get(`/api/users?${q}`).set('Authorization', superAdmin.bearer);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('validation_error');
    },
  );

  test('list items carry roles but never a password hash', async () => {
    const res = await api()
      .get(`/api/users?search=${encodeURIComponent(superAdmin.user.email)}`)
      .set('Authorization', superAdmin.bearer);
    expect(res.body.users).toHaveLength(1);
    const item = res.body.users[0];
    expect(Object.keys(item).sort()).toEqual(
      [
        'created_at',
        'email',
        'email_verified',
        'first_name',
        'id',
        'is_active',
        'invitation_expires_at',
        'last_login_at',
        'last_name',
        'name',
        'roles',
        'status',
        'updated_at',
      ].sort(),
    );
    expect(item.roles).toEqual([{ id: await roleIdByName(t, 'super_admin'), name: 'super_admin', application: null }]);
    expect(JSON.stringify(res.body)).not.toMatch(/password|\$2[aby]\$/);
  });
});

describe('GET /api/users/:userId', () => {
  test('user detail with active roles (global and app-scoped) and resolved permissions', async () => {
    const user = await makeUser(t, { firstName: 'Lin', lastName: 'Detail', roles: ['manager'] });
    const appRole = await makeRole(t, { application: 'crm', permissions: ['users:delete'] });
    const inactive = await makeRole(t, { permissions: ['oauth_clients:read'], isActive: false });
    await t.db('user_roles').insert([
      { user_id: user.id, role_id: appRole.id },
      { user_id: user.id, role_id: inactive.id },
    ]);

    const res = await api().get(`/api/users/${user.id}`).set('Authorization', superAdmin.bearer);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.user).sort()).toEqual(
      [
        'created_at',
        'email',
        'email_verified',
        'first_name',
        'id',
        'is_active',
        'invitation_expires_at',
        'last_login_at',
        'last_name',
        'name',
        'permissions',
        'roles',
        'status',
        'updated_at',
      ].sort(),
    );
    expect(res.body.user).toMatchObject({
      id: user.id,
      email: user.email,
      name: 'Lin Detail',
      first_name: 'Lin',
      last_name: 'Detail',
      is_active: true,
      email_verified: true,
      last_login_at: null,
      roles: [
        { id: await roleIdByName(t, 'manager'), name: 'manager', application: null },
        { id: appRole.id, name: appRole.name, application: 'crm' },
      ],
      // Only active global roles grant server permissions.
      permissions: ['users:read', 'users:write'],
    });
  });

  test('unknown id -> 404; malformed id -> 400 validation_error', async () => {
    const missing = await api().get(`/api/users/${randomUUID()}`).set('Authorization', superAdmin.bearer);
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('not_found');
    for (const bad of ['not-a-uuid', '1', "1' or '1'='1"]) {
      const res = await api()
        .get(`/api/users/${encodeURIComponent(bad)}`)
        .set('Authorization', superAdmin.bearer);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('validation_error');
    }
  });

  test('/admin/list and /roles/list are not taken for a :userId', async () => {
    const admins = await api().get('/api/users/admin/list').set('Authorization', superAdmin.bearer);
    expect(admins.status).toBe(200);
    expect(Array.isArray(admins.body.users)).toBe(true);
    const roles = await api().get('/api/users/roles/list').set('Authorization', superAdmin.bearer);
    expect(roles.status).toBe(200);
    expect(Array.isArray(roles.body.roles)).toBe(true);
  });
});

describe('POST /api/users (invite)', () => {
  test('creates an unverified user without a password and mails a set-password link', async () => {
    const email = uniqueEmail('invitee');
    t.mails.length = 0;
    const res = await api()
      .post('/api/users')
      .set('Authorization', superAdmin.bearer)
      .send({ email: `  ${email.toUpperCase()} `, first_name: 'New', last_name: 'Person' });
    expect(res.status).toBe(201);
    expect(res.body.user).toMatchObject({ email, name: 'New Person', is_active: true, email_verified: false, roles: [], permissions: [] });

    const row = await t.db('users').where({ id: res.body.user.id }).first();
    expect(row.password_hash).toBeNull();
    expect(row.email_verified).toBe(false);

    expect(t.mails).toHaveLength(1);
    expect(t.mails[0]!.to).toBe(email);
    const link = /http:\/\/sso\.test\/set-password\?token=([A-Za-z0-9_-]+)/.exec(t.mails[0]!.text);
    expect(link).not.toBeNull();
    const tokens = await t.db('email_tokens').where({ user_id: row.id, purpose: 'set_password' });
    expect(tokens).toHaveLength(1);

    // Without a usable password the invitee cannot sign in yet.
    const login = await api().post('/api/auth/login').send({ email, password: 'anything-at-all' });
    expect(login.status).toBe(401);
  });

  test('an existing email -> 409 conflict and no mail', async () => {
    const existing = await makeUser(t);
    t.mails.length = 0;
    const res = await api()
      .post('/api/users')
      .set('Authorization', superAdmin.bearer)
      .send({ email: existing.email.toUpperCase(), first_name: 'Dup', last_name: 'Licate' });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('conflict');
    expect(t.mails).toHaveLength(0);
  });

  test('role_ids are granted at invite; they need users:manage_roles', async () => {
    const role = await makeRole(t, { permissions: ['users:read'] });
    const ok = await api()
      .post('/api/users')
      .set('Authorization', superAdmin.bearer)
      .send({ email: uniqueEmail(), first_name: 'With', last_name: 'Role', role_ids: [role.id] });
    expect(ok.status).toBe(201);
    expect(ok.body.user.roles).toEqual([{ id: role.id, name: role.name, application: null }]);
    expect(ok.body.user.permissions).toEqual(['users:read']);

    const writer = await makeUserWithPermissions(t, ['users:write']);
    const email = uniqueEmail();
    const refused = await api()
      .post('/api/users')
      .set('Authorization', writer.bearer)
      .send({ email, first_name: 'No', last_name: 'Roles', role_ids: [role.id] });
    expect(refused.status).toBe(403);
    expect(await t.db('users').where({ email }).first()).toBeUndefined();
  });

  test('an unknown role id -> 404 and no user is created', async () => {
    const email = uniqueEmail();
    const res = await api()
      .post('/api/users')
      .set('Authorization', superAdmin.bearer)
      .send({ email, first_name: 'A', last_name: 'B', role_ids: [randomUUID()] });
    expect(res.status).toBe(404);
    expect(await t.db('users').where({ email }).first()).toBeUndefined();
  });

  test('missing fields -> 400 validation_error with details', async () => {
    const res = await api().post('/api/users').set('Authorization', superAdmin.bearer).send({ email: 'not-an-email' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
    expect(res.body.details.map((d: { path: string }) => d.path).sort()).toEqual(['email', 'first_name', 'last_name']);
  });
});

describe('PUT /api/users/:userId', () => {
  test('updates names, email and flags', async () => {
    const user = await makeUser(t, { emailVerified: false });
    const email = uniqueEmail('changed');
    const res = await api()
      .put(`/api/users/${user.id}`)
      .set('Authorization', superAdmin.bearer)
      .send({ first_name: ' Marie ', last_name: 'Curie', email: email.toUpperCase(), email_verified: true });
    expect(res.status).toBe(200);
    expect(res.body.user).toMatchObject({ first_name: 'Marie', last_name: 'Curie', name: 'Marie Curie', email, email_verified: true });
    const row = await t.db('users').where({ id: user.id }).first();
    expect(row).toMatchObject({ email, first_name: 'Marie', email_verified: true });
  });

  test("another user's email -> 409 conflict, nothing changed", async () => {
    const a = await makeUser(t);
    const b = await makeUser(t);
    const res = await api().put(`/api/users/${a.id}`).set('Authorization', superAdmin.bearer).send({ email: b.email, first_name: 'X' });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('conflict');
    expect((await t.db('users').where({ id: a.id }).first()).first_name).toBe('Test');
  });

  test('an empty body -> 400; unknown user -> 404', async () => {
    const user = await makeUser(t);
    expect((await api().put(`/api/users/${user.id}`).set('Authorization', superAdmin.bearer).send({})).status).toBe(400);
    expect((await api().put(`/api/users/${randomUUID()}`).set('Authorization', superAdmin.bearer).send({ first_name: 'A' })).status).toBe(
      404,
    );
  });

  test('is_active=false deactivates: sessions revoked, the token stops working', async () => {
    const target = await makeSignedInUser(t);
    const res = await api().put(`/api/users/${target.user.id}`).set('Authorization', superAdmin.bearer).send({ is_active: false });
    expect(res.status).toBe(200);
    expect(res.body.user.is_active).toBe(false);
    expect(await activeSessionCount(target.user.id)).toBe(0);
    expect((await api().get('/api/auth/me').set('Authorization', target.bearer)).status).toBe(401);
  });

  test('is_active=false needs users:delete as well as users:write', async () => {
    const writer = await makeUserWithPermissions(t, ['users:write']);
    const target = await makeUser(t);
    const res = await api().put(`/api/users/${target.id}`).set('Authorization', writer.bearer).send({ is_active: false });
    expect(res.status).toBe(403);
    expect((await t.db('users').where({ id: target.id }).first()).is_active).toBe(true);
  });

  test('is_active=true reactivates; the user can sign in again', async () => {
    const target = await makeUser(t, { isActive: false });
    const res = await api().put(`/api/users/${target.id}`).set('Authorization', superAdmin.bearer).send({ is_active: true });
    expect(res.status).toBe(200);
    expect(res.body.user.is_active).toBe(true);
    await signIn(t, target);
  });

  test("a non-super_admin cannot change a super_admin's account (no takeover through the email)", async () => {
    const admin = await makeSignedInUser(t, ['admin']);
    const victim = await makeUser(t, { roles: ['super_admin'] });
    const res = await api()
      .put(`/api/users/${victim.id}`)
      .set('Authorization', admin.bearer)
      .send({ email: uniqueEmail('attacker') });
    expect(res.status).toBe(403);
    expect((await t.db('users').where({ id: victim.id }).first()).email).toBe(victim.email);
  });
});

describe('DELETE /api/users/:userId', () => {
  test('deactivates without deleting; every session is revoked and the old token answers 401', async () => {
    const target = await makeSignedInUser(t);
    const second = await signIn(t, target.user);
    expect(await activeSessionCount(target.user.id)).toBe(2);
    expect((await api().get('/api/auth/me').set('Authorization', target.bearer)).status).toBe(200);

    const res = await api().delete(`/api/users/${target.user.id}`).set('Authorization', superAdmin.bearer);
    expect(res.status).toBe(200);
    expect(res.body.user).toMatchObject({ id: target.user.id, is_active: false });

    const row = await t.db('users').where({ id: target.user.id }).first();
    expect(row).toBeDefined();
    expect(row.is_active).toBe(false);
    expect(await activeSessionCount(target.user.id)).toBe(0);
    expect((await api().get('/api/auth/me').set('Authorization', target.bearer)).status).toBe(401);
    expect((await api().get('/api/auth/me').set('Authorization', `Bearer ${second.accessToken}`)).status).toBe(401);
    const refreshed = await api().post('/api/auth/refresh-token').send({ refreshToken: second.refreshToken });
    expect(refreshed.status).toBe(401);
    const login = await api().post('/api/auth/login').send({ email: target.user.email, password: target.user.password });
    expect(login.status).toBe(401);
  });

  test('a deactivated admin loses access at once with the same token', async () => {
    const admin = await makeSignedInUser(t, ['admin']);
    expect((await api().get('/api/users').set('Authorization', admin.bearer)).status).toBe(200);
    await api().delete(`/api/users/${admin.user.id}`).set('Authorization', superAdmin.bearer).expect(200);
    expect((await api().get('/api/users').set('Authorization', admin.bearer)).status).toBe(401);
  });

  test('an admin cannot deactivate themselves -> 409, still active', async () => {
    const admin = await makeSignedInUser(t, ['admin']);
    const res = await api().delete(`/api/users/${admin.user.id}`).set('Authorization', admin.bearer);
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('conflict');
    expect(res.body.message).toMatch(/own account/);
    expect((await t.db('users').where({ id: admin.user.id }).first()).is_active).toBe(true);
    expect((await api().get('/api/auth/me').set('Authorization', admin.bearer)).status).toBe(200);
  });

  test('a non-super_admin holding users:delete cannot deactivate a super_admin -> 403', async () => {
    const admin = await makeSignedInUser(t, ['admin']);
    const victim = await makeUser(t, { roles: ['super_admin'] });
    const res = await api().delete(`/api/users/${victim.id}`).set('Authorization', admin.bearer);
    expect(res.status).toBe(403);
    expect((await t.db('users').where({ id: victim.id }).first()).is_active).toBe(true);
  });

  test('unknown user -> 404; malformed id -> 400', async () => {
    expect((await api().delete(`/api/users/${randomUUID()}`).set('Authorization', superAdmin.bearer)).status).toBe(404);
    expect((await api().delete('/api/users/xyz').set('Authorization', superAdmin.bearer)).status).toBe(400);
  });
});

describe('last active super_admin', () => {
  let tt: TestApp;
  beforeAll(async () => {
    tt = await createTestApp();
  });
  afterAll(async () => {
    await tt.close();
  });

  test('cannot be deactivated or lose the role; a second super_admin makes both possible', async () => {
    const only = await makeSignedInUser(tt, ['super_admin']);
    const other = await makeSignedInUser(tt, ['super_admin']);
    const superRole = await roleIdByName(tt, 'super_admin');

    // `other` deactivates `only` (allowed: `other` remains), then cannot remove their own last super_admin role.
    await request(tt.app).delete(`/api/users/${only.user.id}`).set('Authorization', other.bearer).expect(200);
    const selfRemove = await request(tt.app).delete(`/api/users/${other.user.id}/roles/${superRole}`).set('Authorization', other.bearer);
    expect(selfRemove.status).toBe(409);
    expect(selfRemove.body.message).toMatch(/no active super_admin/);

    // A deactivated super_admin does not count: `other` is still the last one.
    const third = await makeSignedInUser(tt, ['super_admin']);
    await request(tt.app).delete(`/api/users/${third.user.id}`).set('Authorization', other.bearer).expect(200);
    const deactivateLast = await request(tt.app)
      .put(`/api/users/${other.user.id}`)
      .set('Authorization', other.bearer)
      .send({ is_active: false });
    expect(deactivateLast.status).toBe(409);

    // A peer super_admin cannot re-activate `only` (CONTRACT §8: strictly more rights needed); the operator's CLI can.
    await request(tt.app).put(`/api/users/${only.user.id}`).set('Authorization', other.bearer).send({ is_active: true }).expect(403);
    await ensureSuperAdmin(tt.ctx, { email: only.user.email, password: 'operator-reset-pass', resetPassword: true });
    // Now `other` may drop the role.
    await request(tt.app).delete(`/api/users/${other.user.id}/roles/${superRole}`).set('Authorization', other.bearer).expect(204);
    expect((await request(tt.app).get('/api/users').set('Authorization', other.bearer)).status).toBe(403);
  });

  test('of concurrent removals of the last two super_admins, exactly one succeeds (repeated to catch the race)', async () => {
    const superRole = await roleIdByName(tt, 'super_admin');
    for (let round = 0; round < 10; round++) {
      await tt.db('user_roles').where({ role_id: superRole }).delete();
      const a = await makeSignedInUser(tt, ['super_admin']);
      const b = await makeSignedInUser(tt, ['super_admin']);
      const [ra, rb] = await Promise.all([
        request(tt.app).delete(`/api/users/${a.user.id}/roles/${superRole}`).set('Authorization', a.bearer),
        request(tt.app).put(`/api/users/${b.user.id}`).set('Authorization', a.bearer).send({ is_active: false }),
      ]);
      // The loser answers 409, or 403 when a's own removal landed before the deactivation was authorised.
      expect([ra.status, rb.status].filter((s) => s < 300)).toHaveLength(1);
      expect([ra.status, rb.status].every((s) => [200, 204, 403, 409].includes(s))).toBe(true);
      const left = await tt
        .db('user_roles as ur')
        .join('users as u', 'u.id', 'ur.user_id')
        .where({ 'ur.role_id': superRole, 'u.is_active': true });
      expect(left).toHaveLength(1);
    }
  });
});

describe('roles of a user through /api/users', () => {
  test('assign by role_id, list, remove; the user detail follows', async () => {
    const user = await makeUser(t);
    const role = await makeRole(t, { permissions: ['oauth_clients:read'] });

    const assigned = await api().post(`/api/users/${user.id}/roles`).set('Authorization', superAdmin.bearer).send({ role_id: role.id });
    expect(assigned.status).toBe(201);
    expect(assigned.body.roles.map((r: { id: string }) => r.id)).toEqual([role.id]);
    expect(assigned.body.roles[0]).toMatchObject({
      name: role.name,
      permissions: ['oauth_clients:read'],
      is_active: true,
      application: null,
    });

    const again = await api().post(`/api/users/${user.id}/roles`).set('Authorization', superAdmin.bearer).send({ role_id: role.id });
    expect(again.status).toBe(200);
    expect(again.body.roles).toHaveLength(1);

    const list = await api().get(`/api/users/${user.id}/roles`).set('Authorization', superAdmin.bearer);
    expect(list.body.roles.map((r: { id: string }) => r.id)).toEqual([role.id]);

    const detail = await api().get(`/api/users/${user.id}`).set('Authorization', superAdmin.bearer);
    expect(detail.body.user.permissions).toEqual(['oauth_clients:read']);

    await api().delete(`/api/users/${user.id}/roles/${role.id}`).set('Authorization', superAdmin.bearer).expect(204);
    const gone = await api().delete(`/api/users/${user.id}/roles/${role.id}`).set('Authorization', superAdmin.bearer);
    expect(gone.status).toBe(404);
    expect(await t.db('user_roles').where({ user_id: user.id })).toHaveLength(0);
  });

  test('unknown user -> 404; malformed roleId -> 400', async () => {
    const role = await makeRole(t);
    expect(
      (await api().post(`/api/users/${randomUUID()}/roles`).set('Authorization', superAdmin.bearer).send({ role_id: role.id })).status,
    ).toBe(404);
    expect((await api().get(`/api/users/${randomUUID()}/roles`).set('Authorization', superAdmin.bearer)).status).toBe(404);
    const user = await makeUser(t);
    expect((await api().delete(`/api/users/${user.id}/roles/nope`).set('Authorization', superAdmin.bearer)).status).toBe(400);
  });
});

import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { makeSignedInUser, makeUser } from '../helpers/factories';
import { CATALOGUE, makeRole, roleIdByName } from '../helpers/rbac';
import { createTestApp, type TestApp } from '../helpers/test-app';

let t: TestApp;
let superAdmin: string;
let admin: string;

beforeAll(async () => {
  t = await createTestApp();
  superAdmin = (await makeSignedInUser(t, ['super_admin'])).bearer;
  admin = (await makeSignedInUser(t, ['admin'])).bearer;
});
afterAll(async () => {
  await t.close();
});

const api = () => request(t.app);
const uniqueName = (prefix = 'role') => `${prefix}-${randomBytes(4).toString('hex')}`;
type RoleBody = { id: string; name: string; application: string | null; is_active: boolean; permissions: string[] };

describe('GET /api/rbac/permissions', () => {
  test('the whole catalogue of spec §2.9, each with a description', async () => {
    const res = await api().get('/api/rbac/permissions').set('Authorization', admin);
    expect(res.status).toBe(200);
    expect(res.body.permissions.map((p: { name: string }) => p.name).sort()).toEqual([...CATALOGUE].sort());
    for (const p of res.body.permissions) {
      expect(Object.keys(p).sort()).toEqual(['description', 'name']);
      expect(p.description.length).toBeGreaterThan(5);
    }
  });
});

describe('role listings', () => {
  test('/api/rbac/roles lists global and application-scoped roles, deactivated ones included', async () => {
    const scoped = await makeRole(t, { application: 'billing', permissions: ['users:read'] });
    const off = await makeRole(t, { isActive: false });
    const res = await api().get('/api/rbac/roles').set('Authorization', admin);
    expect(res.status).toBe(200);
    const byId = new Map<string, RoleBody>(res.body.roles.map((r: RoleBody) => [r.id, r]));
    expect(byId.get(scoped.id)).toMatchObject({ name: scoped.name, application: 'billing', permissions: ['users:read'], is_active: true });
    expect(byId.get(off.id)).toMatchObject({ is_active: false });
    const seeded = res.body.roles.filter((r: RoleBody) => r.application === null).map((r: RoleBody) => r.name);
    expect(seeded).toEqual(expect.arrayContaining(['super_admin', 'admin', 'manager']));
    const role = res.body.roles[0];
    expect(Object.keys(role).sort()).toEqual([
      'api_scopes',
      'application',
      'created_at',
      'description',
      'id',
      'is_active',
      'name',
      'permissions',
      'updated_at',
    ]);
  });

  test('/api/users/roles/list lists active roles only, application-scoped ones included', async () => {
    const scoped = await makeRole(t, { application: 'billing' });
    const off = await makeRole(t, { isActive: false });
    const res = await api().get('/api/users/roles/list').set('Authorization', admin);
    const ids = res.body.roles.map((r: RoleBody) => r.id);
    expect(ids).toContain(scoped.id);
    expect(ids).not.toContain(off.id);
    expect(res.body.roles.every((r: RoleBody) => r.is_active)).toBe(true);
  });

  test('seeded roles carry the CONTRACT §6 permissions; super_admin shows every permission', async () => {
    const res = await api().get('/api/rbac/roles').set('Authorization', admin);
    const byName = (n: string) => res.body.roles.find((r: RoleBody) => r.name === n && r.application === null);
    expect(byName('super_admin').permissions).toEqual([...CATALOGUE].sort());
    // CONTRACT §23: system:manage_identity_providers is super_admin's alone; no migration gives it to another role.
    // The same for system:manage_settings (docs/settings.md: sensitive settings and test mails).
    const superAdminOnly = ['system:manage_identity_providers', 'system:manage_settings'];
    expect(byName('admin').permissions).toEqual(CATALOGUE.filter((p) => !superAdminOnly.includes(p)).sort());
    expect(byName('manager').permissions).toEqual(['users:read', 'users:write']);
  });

  test('GET /api/rbac/roles/:roleId answers one role, deactivated too; an unknown id is 404', async () => {
    const off = await makeRole(t, { application: 'billing', permissions: ['users:read'], isActive: false });
    const res = await api().get(`/api/rbac/roles/${off.id}`).set('Authorization', admin);
    expect(res.status).toBe(200);
    expect(res.body.role).toMatchObject({ id: off.id, application: 'billing', permissions: ['users:read'], is_active: false });
    expect((await api().get(`/api/rbac/roles/${randomUUID()}`).set('Authorization', admin)).status).toBe(404);
  });
});

describe('role create, update, deactivate', () => {
  test('POST creates a role -> 201 with the CONTRACT §6 shape', async () => {
    const name = uniqueName();
    const res = await api()
      .post('/api/rbac/roles')
      .set('Authorization', superAdmin)
      .send({ name, description: 'Support desk', permissions: ['users:read', 'users:write', 'users:read'] });
    expect(res.status).toBe(201);
    expect(res.body.role).toMatchObject({
      name,
      description: 'Support desk',
      application: null,
      permissions: ['users:read', 'users:write'],
      is_active: true,
    });
    expect(res.body.role.id).toMatch(/^[0-9a-f-]{36}$/);
    const rows = await t.db('role_permissions').where({ role_id: res.body.role.id });
    expect(rows).toHaveLength(2);
  });

  test('the same name twice in one application -> 409; in another application or globally it is fine', async () => {
    const name = uniqueName();
    await api().post('/api/rbac/roles').set('Authorization', superAdmin).send({ name }).expect(201);
    const dupGlobal = await api().post('/api/rbac/roles').set('Authorization', superAdmin).send({ name });
    expect(dupGlobal.status).toBe(409);
    expect(dupGlobal.body.error).toBe('conflict');

    const inCrm = await api().post('/api/rbac/roles').set('Authorization', superAdmin).send({ name, application: 'crm' });
    expect(inCrm.status).toBe(201);
    expect(inCrm.body.role.application).toBe('crm');
    await api().post('/api/rbac/roles').set('Authorization', superAdmin).send({ name, application: 'erp' }).expect(201);
    const dupCrm = await api().post('/api/rbac/roles').set('Authorization', superAdmin).send({ name, application: 'crm' });
    expect(dupCrm.status).toBe(409);
    expect(await t.db('roles').where({ name })).toHaveLength(3);
  });

  test('one service behind both URL sets: a role made through /api/users/roles collides through /api/rbac/roles', async () => {
    const name = uniqueName();
    const created = await api().post('/api/users/roles').set('Authorization', superAdmin).send({ name, application: 'crm' });
    expect(created.status).toBe(201);
    expect((await api().post('/api/rbac/roles').set('Authorization', superAdmin).send({ name, application: 'crm' })).status).toBe(409);
    const updated = await api()
      .put(`/api/rbac/roles/${created.body.role.id}`)
      .set('Authorization', superAdmin)
      .send({ description: 'via rbac' });
    expect(updated.body.role.description).toBe('via rbac');
  });

  test('the seeded global admin name is taken -> 409', async () => {
    expect((await api().post('/api/users/roles').set('Authorization', superAdmin).send({ name: 'admin' })).status).toBe(409);
  });

  test.each([
    [{ name: 'x', permissions: ['users:fly'] }, 'permissions'],
    [{ name: '' }, 'name'],
    [{ name: 'has space' }, 'name'],
    [{ name: 'ok', application: '' }, 'application'],
    [{ name: 'ok', permissions: 'users:read' }, 'permissions'],
    [{}, 'name'],
  ])('invalid body %j -> 400 validation_error on %s', async (body, path) => {
    const res = await api().post('/api/rbac/roles').set('Authorization', superAdmin).send(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
    expect(res.body.details.map((d: { path: string }) => d.path)).toContain(path);
  });

  test('PUT renames, replaces permissions and reactivates; a taken name -> 409', async () => {
    const role = await makeRole(t, { permissions: ['users:read'], isActive: false });
    const other = await makeRole(t);
    const newName = uniqueName('renamed');
    const res = await api()
      .put(`/api/rbac/roles/${role.id}`)
      .set('Authorization', superAdmin)
      .send({ name: newName, permissions: ['oauth_clients:read'], is_active: true });
    expect(res.status).toBe(200);
    expect(res.body.role).toMatchObject({ id: role.id, name: newName, permissions: ['oauth_clients:read'], is_active: true });

    const taken = await api().put(`/api/users/roles/${role.id}`).set('Authorization', superAdmin).send({ name: other.name });
    expect(taken.status).toBe(409);
    expect((await t.db('roles').where({ id: role.id }).first()).name).toBe(newName);
  });

  test('PUT with nothing to update -> 400; unknown role -> 404; malformed id -> 400', async () => {
    const role = await makeRole(t);
    expect((await api().put(`/api/rbac/roles/${role.id}`).set('Authorization', superAdmin).send({})).status).toBe(400);
    expect((await api().put(`/api/rbac/roles/${randomUUID()}`).set('Authorization', superAdmin).send({ description: 'x' })).status).toBe(
      404,
    );
    expect((await api().put('/api/rbac/roles/123').set('Authorization', superAdmin).send({ description: 'x' })).status).toBe(400);
    expect((await api().delete(`/api/users/roles/${randomUUID()}`).set('Authorization', superAdmin)).status).toBe(404);
  });

  test('built-in roles keep their names; super_admin keeps every permission and cannot be deactivated', async () => {
    const superRole = await roleIdByName(t, 'super_admin');
    const managerRole = await roleIdByName(t, 'manager');
    expect((await api().put(`/api/rbac/roles/${managerRole}`).set('Authorization', superAdmin).send({ name: 'boss' })).status).toBe(409);
    expect((await api().put(`/api/rbac/roles/${superRole}`).set('Authorization', superAdmin).send({ permissions: [] })).status).toBe(409);
    const del = await api().delete(`/api/rbac/roles/${superRole}`).set('Authorization', superAdmin);
    expect(del.status).toBe(409);
    expect((await t.db('roles').where({ id: superRole }).first()).is_active).toBe(true);
    const described = await api()
      .put(`/api/rbac/roles/${managerRole}`)
      .set('Authorization', superAdmin)
      .send({ description: 'Reads and updates users' });
    expect(described.status).toBe(200);
  });

  test('DELETE deactivates without deleting; the assignment stays but grants nothing', async () => {
    const user = await makeUser(t);
    const role = await makeRole(t, { permissions: ['users:read'] });
    await t.db('user_roles').insert({ user_id: user.id, role_id: role.id });

    const res = await api().delete(`/api/rbac/roles/${role.id}`).set('Authorization', superAdmin);
    expect(res.status).toBe(200);
    expect(res.body.role).toMatchObject({ id: role.id, is_active: false });
    expect(await t.db('roles').where({ id: role.id }).first()).toMatchObject({ is_active: false });
    expect(await t.db('user_roles').where({ user_id: user.id, role_id: role.id })).toHaveLength(1);

    const perms = await api().get(`/api/rbac/users/${user.id}/permissions`).set('Authorization', superAdmin);
    expect(perms.body).toEqual({ user_id: user.id, roles: [], permissions: [] });
    const listed = await api().get(`/api/rbac/users/${user.id}/roles`).set('Authorization', superAdmin);
    expect(listed.body.roles).toEqual([expect.objectContaining({ id: role.id, is_active: false })]);
  });
});

describe('live permissions: the same access token follows role changes at once', () => {
  test('grant, remove, deactivate and reactivate a role', async () => {
    const subject = await makeSignedInUser(t);
    const role = await makeRole(t, { permissions: ['users:read'] });
    const probe = () => api().get('/api/users').set('Authorization', subject.bearer);
    expect((await probe()).status).toBe(403);

    await api().post(`/api/rbac/users/${subject.user.id}/roles`).set('Authorization', superAdmin).send({ role_id: role.id }).expect(201);
    expect((await probe()).status).toBe(200);

    await api().delete(`/api/rbac/roles/${role.id}`).set('Authorization', superAdmin).expect(200);
    expect((await probe()).status).toBe(403);

    await api().put(`/api/rbac/roles/${role.id}`).set('Authorization', superAdmin).send({ is_active: true }).expect(200);
    expect((await probe()).status).toBe(200);

    await api()
      .put(`/api/rbac/roles/${role.id}`)
      .set('Authorization', superAdmin)
      .send({ permissions: ['users:write'] })
      .expect(200);
    expect((await probe()).status).toBe(403);
    await api()
      .put(`/api/rbac/roles/${role.id}`)
      .set('Authorization', superAdmin)
      .send({ permissions: ['users:read'] })
      .expect(200);
    expect((await probe()).status).toBe(200);

    await api().delete(`/api/rbac/users/${subject.user.id}/roles/${role.id}`).set('Authorization', superAdmin).expect(204);
    expect((await probe()).status).toBe(403);

    const me = await api().get('/api/auth/me').set('Authorization', subject.bearer);
    expect(me.body.user.permissions).toEqual([]);
  });

  test('admin-tier roles too: requireRole follows a granted and removed super_admin', async () => {
    const subject = await makeSignedInUser(t, ['admin']);
    const probe = () => api().post('/api/rbac/roles').set('Authorization', subject.bearer).send({ name: uniqueName() });
    expect((await probe()).status).toBe(403);
    const superRole = await roleIdByName(t, 'super_admin');
    await api().post(`/api/rbac/users/${subject.user.id}/roles`).set('Authorization', superAdmin).send({ role: 'super_admin' }).expect(201);
    expect((await probe()).status).toBe(201);
    await api().delete(`/api/users/${subject.user.id}/roles/${superRole}`).set('Authorization', superAdmin).expect(204);
    expect((await probe()).status).toBe(403);
  });
});

describe('role assignment', () => {
  test('by name and application; the app-scoped role is listed but grants no server permission', async () => {
    const user = await makeUser(t);
    const scoped = await makeRole(t, { application: 'crm', permissions: ['users:read'] });
    await makeRole(t, { name: scoped.name, permissions: ['oauth_clients:read'] });
    const res = await api()
      .post(`/api/rbac/users/${user.id}/roles`)
      .set('Authorization', admin)
      .send({ role: scoped.name, application: 'crm' });
    expect(res.status).toBe(201);
    expect(res.body.roles).toEqual([expect.objectContaining({ id: scoped.id, application: 'crm' })]);

    const perms = await api().get(`/api/rbac/users/${user.id}/permissions`).set('Authorization', admin);
    expect(perms.body).toEqual({ user_id: user.id, roles: [{ id: scoped.id, name: scoped.name, application: 'crm' }], permissions: [] });
  });

  test('a deactivated role -> 409; an unknown role -> 404; nothing assigned', async () => {
    const user = await makeUser(t);
    const off = await makeRole(t, { isActive: false });
    const deactivated = await api().post(`/api/rbac/users/${user.id}/roles`).set('Authorization', admin).send({ role_id: off.id });
    expect(deactivated.status).toBe(409);
    const byName = await api().post(`/api/users/${user.id}/roles`).set('Authorization', admin).send({ role: off.name });
    expect(byName.status).toBe(409);
    expect((await api().post(`/api/rbac/users/${user.id}/roles`).set('Authorization', admin).send({ role_id: randomUUID() })).status).toBe(
      404,
    );
    expect((await api().post(`/api/rbac/users/${user.id}/roles`).set('Authorization', admin).send({ role: 'no-such-role' })).status).toBe(
      404,
    );
    expect(
      (await api().post(`/api/rbac/users/${user.id}/roles`).set('Authorization', admin).send({ role: 'manager', application: 'crm' }))
        .status,
    ).toBe(404);
    expect(await t.db('user_roles').where({ user_id: user.id })).toHaveLength(0);
  });

  test.each([[{}], [{ role_id: 'nope' }], [{ role_id: randomUUID(), role: 'manager' }], [{ application: 'crm' }]])(
    'bad body %j -> 400',
    async (body) => {
      const user = await makeUser(t);
      const res = await api().post(`/api/rbac/users/${user.id}/roles`).set('Authorization', admin).send(body);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('validation_error');
    },
  );

  test('only a super_admin grants or removes super_admin', async () => {
    const user = await makeUser(t);
    const denied = await api().post(`/api/rbac/users/${user.id}/roles`).set('Authorization', admin).send({ role: 'super_admin' });
    expect(denied.status).toBe(403);
    expect(await t.db('user_roles').where({ user_id: user.id })).toHaveLength(0);

    await api().post(`/api/rbac/users/${user.id}/roles`).set('Authorization', superAdmin).send({ role: 'super_admin' }).expect(201);
    const superRole = await roleIdByName(t, 'super_admin');
    expect((await api().delete(`/api/rbac/users/${user.id}/roles/${superRole}`).set('Authorization', admin)).status).toBe(403);
    await api().delete(`/api/rbac/users/${user.id}/roles/${superRole}`).set('Authorization', superAdmin).expect(204);
  });

  test('an admin can grant admin-tier roles below super_admin', async () => {
    const user = await makeUser(t);
    const res = await api().post(`/api/users/${user.id}/roles`).set('Authorization', admin).send({ role: 'manager' });
    expect(res.status).toBe(201);
  });
});

describe('resolved permissions and check-permission', () => {
  test('super_admin resolves to the whole catalogue and passes any check', async () => {
    const user = await makeUser(t, { roles: ['super_admin'] });
    const perms = await api().get(`/api/rbac/users/${user.id}/permissions`).set('Authorization', admin);
    expect(perms.body.permissions).toEqual([...CATALOGUE].sort());
    const check = await api()
      .post(`/api/rbac/users/${user.id}/check-permission`)
      .set('Authorization', admin)
      .send({ permission: 'oauth_clients:delete' });
    expect(check.body).toEqual({ hasPermission: true });
  });

  test('true for a held permission, false otherwise and for permissions of app-scoped roles', async () => {
    const user = await makeUser(t, { roles: ['manager'] });
    const scoped = await makeRole(t, { application: 'crm', permissions: ['users:delete'] });
    await t.db('user_roles').insert({ user_id: user.id, role_id: scoped.id });
    const check = (permission: string) =>
      api().post(`/api/rbac/users/${user.id}/check-permission`).set('Authorization', admin).send({ permission });
    expect((await check('users:write')).body).toEqual({ hasPermission: true });
    expect((await check('users:delete')).body).toEqual({ hasPermission: false });
    expect((await check('made:up')).body).toEqual({ hasPermission: false });
  });

  test('a deactivated user holds nothing', async () => {
    const user = await makeUser(t, { roles: ['admin'], isActive: false });
    const res = await api()
      .post(`/api/rbac/users/${user.id}/check-permission`)
      .set('Authorization', admin)
      .send({ permission: 'users:read' });
    expect(res.body).toEqual({ hasPermission: false });
  });

  test('missing permission -> 400; unknown user -> 404', async () => {
    const user = await makeUser(t);
    expect((await api().post(`/api/rbac/users/${user.id}/check-permission`).set('Authorization', admin).send({})).status).toBe(400);
    expect(
      (await api().post(`/api/rbac/users/${randomUUID()}/check-permission`).set('Authorization', admin).send({ permission: 'users:read' }))
        .status,
    ).toBe(404);
    expect((await api().get(`/api/rbac/users/${randomUUID()}/permissions`).set('Authorization', admin)).status).toBe(404);
  });
});

describe('admin users', () => {
  test('active users with an active global admin-tier role, in both listings', async () => {
    const manager = await makeUser(t, { roles: ['manager'] });
    const retired = await makeUser(t, { roles: ['admin'], isActive: false });
    const appAdmin = await makeUser(t);
    await makeRole(t, { name: 'admin', application: 'crm' }).then((r) =>
      t.db('user_roles').insert({ user_id: appAdmin.id, role_id: r.id }),
    );
    const nobody = await makeUser(t);

    const rbac = await api().get('/api/rbac/admin-users').set('Authorization', admin);
    expect(rbac.status).toBe(200);
    const ids = rbac.body.users.map((u: { id: string }) => u.id);
    expect(ids).toContain(manager.id);
    expect(ids).not.toContain(retired.id);
    expect(ids).not.toContain(appAdmin.id);
    expect(ids).not.toContain(nobody.id);
    expect(rbac.body.users.find((u: { id: string }) => u.id === manager.id)).toMatchObject({
      email: manager.email,
      adminRole: 'manager',
      roles: [{ id: await roleIdByName(t, 'manager'), name: 'manager', application: null }],
    });
    expect(JSON.stringify(rbac.body)).not.toMatch(/password/);

    const users = await api().get('/api/users/admin/list').set('Authorization', admin);
    expect(users.body).toEqual(rbac.body);
  });
});

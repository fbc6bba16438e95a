import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { makeApiResource, makeAppClient } from '../helpers/apps';
import { grantRole, makeSignedInUser, makeUser, uniqueEmail } from '../helpers/factories';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Granting a role never hands out more than the granter holds (docs/rbac.md "Guard rails"): every permission of a
 * global role and every API scope of any role (global or scoped to an application) must be held by the granter, except
 * that `admin` and `super_admin` may hand out any API scope. The same rule answers the role endpoints, invitations with
 * roles, SCIM group role mappings, imports with roles and GET /api/users/roles/assignable.
 */

let t: TestApp;
let root: string;

beforeAll(async () => {
  t = await createTestApp();
  root = (await makeSignedInUser(t, ['super_admin'])).bearer;
});
afterAll(async () => {
  await t.close();
});

const api = () => request(t.app);

/** A global or application role with these permissions and API scopes, made through the RBAC API. */
async function makeRole(body: {
  permissions?: string[];
  api_scopes?: Array<{ resource: string; scope: string }>;
  application?: string;
}): Promise<string> {
  const res = await api()
    .post('/api/rbac/roles')
    .set('Authorization', root)
    .send({ name: `role-${randomUUID().slice(0, 8)}`, ...body });
  if (res.status !== 201) throw new Error(`role create answered ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.role.id as string;
}

/** A signed-in user holding exactly these roles (by id). */
async function holderOf(roleIds: string[]) {
  const signed = await makeSignedInUser(t);
  for (const id of roleIds) await t.db('user_roles').insert({ user_id: signed.user.id, role_id: id });
  return signed;
}

const MANAGES_ROLES = ['users:read', 'users:write', 'users:manage_roles'];

describe('granting a role with API scopes', () => {
  let orders: { identifier: string };
  let crm: { clientId: string };
  let erp: { clientId: string };
  let granterRole: string;
  let clerk: string; // global: orders:write
  let reader: string; // global: orders:read
  let crmClerk: string; // crm: orders:write
  let granter: Awaited<ReturnType<typeof holderOf>>;

  beforeAll(async () => {
    orders = await makeApiResource(t, { scopes: ['orders:read', 'orders:write'] });
    crm = await makeAppClient(t);
    erp = await makeAppClient(t);
    clerk = await makeRole({ api_scopes: [{ resource: orders.identifier, scope: 'orders:write' }] });
    reader = await makeRole({ api_scopes: [{ resource: orders.identifier, scope: 'orders:read' }] });
    crmClerk = await makeRole({ application: crm.clientId, api_scopes: [{ resource: orders.identifier, scope: 'orders:write' }] });
    // The granter may manage roles and holds orders:read (globally) and orders:write for erp only.
    granterRole = await makeRole({ permissions: MANAGES_ROLES, api_scopes: [{ resource: orders.identifier, scope: 'orders:read' }] });
    const erpWriter = await makeRole({ application: erp.clientId, api_scopes: [{ resource: orders.identifier, scope: 'orders:write' }] });
    granter = await holderOf([granterRole, erpWriter]);
  });

  const assign = (bearer: string, userId: string, roleId: string) =>
    api().post(`/api/users/${userId}/roles`).set('Authorization', bearer).send({ role_id: roleId });
  const rolesOf = async (userId: string) =>
    ((await t.db('user_roles').where({ user_id: userId }).select('role_id')) as Array<{ role_id: string }>).map((r) => r.role_id);

  test('a scope the granter does not hold is refused (403), on both URL sets, and nothing is assigned or audited', async () => {
    const target = await makeUser(t);
    const refused = await assign(granter.bearer, target.id, clerk);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('forbidden');
    expect(refused.body.message).toContain('orders:write');
    const rbac = await api().post(`/api/rbac/users/${target.id}/roles`).set('Authorization', granter.bearer).send({ role_id: clerk });
    expect(rbac.status).toBe(403);
    expect(await rolesOf(target.id)).toEqual([]);
    expect(await t.db('audit_events').where({ type: 'role.assigned', subject_id: target.id }).first()).toBeUndefined();
  });

  test('a role whose every scope the granter holds is granted (201)', async () => {
    const target = await makeUser(t);
    expect((await assign(granter.bearer, target.id, reader)).status).toBe(201);
    expect(await rolesOf(target.id)).toEqual([reader]);
  });

  test('an application role: held for that application (or globally) counts, held for another application does not', async () => {
    const target = await makeUser(t);
    // orders:write is held for erp only: not for crm.
    expect((await assign(granter.bearer, target.id, crmClerk)).status).toBe(403);
    const erpClerk = await makeRole({ application: erp.clientId, api_scopes: [{ resource: orders.identifier, scope: 'orders:write' }] });
    expect((await assign(granter.bearer, target.id, erpClerk)).status).toBe(201);
    // A role scoped to an application grants nothing on this server, but its API scopes count.
    const crmReader = await makeRole({ application: crm.clientId, api_scopes: [{ resource: orders.identifier, scope: 'orders:read' }] });
    expect((await assign(granter.bearer, target.id, crmReader)).status).toBe(201);
    expect((await rolesOf(target.id)).sort()).toEqual([erpClerk, crmReader].sort());
  });

  test('a deactivated role of the granter grants them nothing to hand out', async () => {
    const writerRole = await makeRole({ api_scopes: [{ resource: orders.identifier, scope: 'orders:write' }] });
    const g = await holderOf([granterRole, writerRole]);
    const target = await makeUser(t);
    expect((await api().put(`/api/rbac/roles/${writerRole}`).set('Authorization', root).send({ is_active: false })).status).toBe(200);
    expect((await assign(g.bearer, target.id, clerk)).status).toBe(403);
    expect((await api().put(`/api/rbac/roles/${writerRole}`).set('Authorization', root).send({ is_active: true })).status).toBe(200);
    expect((await assign(g.bearer, target.id, clerk)).status).toBe(201);
  });

  test('admin and super_admin may hand out any API scope', async () => {
    const admin = await makeSignedInUser(t, ['admin']);
    const a = await makeUser(t);
    expect((await assign(admin.bearer, a.id, clerk)).status).toBe(201);
    expect((await assign(admin.bearer, a.id, crmClerk)).status).toBe(201);
    const b = await makeUser(t);
    expect((await assign(root, b.id, clerk)).status).toBe(201);
  });

  test('GET /api/users/roles/assignable lists only what the caller may hand out, by the same rule', async () => {
    const res = await api().get('/api/users/roles/assignable').set('Authorization', granter.bearer);
    expect(res.status).toBe(200);
    const ids = (res.body.roles as Array<{ id: string }>).map((r) => r.id);
    expect(ids).toContain(reader);
    expect(ids).toContain(granterRole);
    expect(ids).not.toContain(clerk);
    expect(ids).not.toContain(crmClerk);
    // Roles above the caller's permissions are not offered either.
    const superAdmin = await t.db('roles').where({ name: 'super_admin' }).whereNull('application').first('id');
    const admin = await t.db('roles').where({ name: 'admin' }).whereNull('application').first('id');
    expect(ids).not.toContain(superAdmin.id);
    expect(ids).not.toContain(admin.id);
    // A deactivated role the caller could hand out stays listed (with is_active false), as documented.
    const dormant = await makeRole({});
    await api().put(`/api/rbac/roles/${dormant}`).set('Authorization', root).send({ is_active: false }).expect(200);
    const again = await api().get('/api/users/roles/assignable').set('Authorization', granter.bearer);
    expect(again.body.roles.find((r: { id: string }) => r.id === dormant)).toMatchObject({ is_active: false });
    // An admin is offered every role but super_admin.
    const adminUser = await makeSignedInUser(t, ['admin']);
    const forAdmin = (
      (await api().get('/api/users/roles/assignable').set('Authorization', adminUser.bearer)).body.roles as Array<{ id: string }>
    ).map((r) => r.id);
    expect(forAdmin).toEqual(expect.arrayContaining([clerk, crmClerk, reader]));
    expect(forAdmin).not.toContain(superAdmin.id);
  });

  test('an invitation carrying such a role is refused and creates nobody', async () => {
    const email = uniqueEmail('invited');
    const res = await api()
      .post('/api/users')
      .set('Authorization', granter.bearer)
      .send({ email, first_name: 'In', last_name: 'Vited', role_ids: [clerk] });
    expect(res.status).toBe(403);
    expect(await t.db('users').where({ email }).first()).toBeUndefined();
    expect(t.mails.some((m) => m.to === email)).toBe(false);
    const ok = await api()
      .post('/api/users')
      .set('Authorization', granter.bearer)
      .send({ email, first_name: 'In', last_name: 'Vited', role_ids: [reader] });
    expect(ok.status).toBe(201);
  });

  test('a SCIM group mapped to such a role is refused and the mapping stays as it was', async () => {
    const connection = await api().post('/api/admin/scim-connections').set('Authorization', root).send({ name: 'Directory' }).expect(201);
    const group = await api()
      .post('/scim/v2/Groups')
      .set('Authorization', `Bearer ${connection.body.token as string}`)
      .set('Content-Type', 'application/scim+json')
      .send(JSON.stringify({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'Sales' }))
      .expect(201);
    const path = `/api/admin/scim-groups/${group.body.id as string}/roles`;
    const refused = await api()
      .put(path)
      .set('Authorization', granter.bearer)
      .send({ role_ids: [reader, clerk] });
    expect(refused.status).toBe(403);
    expect((await api().get(path).set('Authorization', root)).body.group.role_ids).toEqual([]);
    expect(
      (
        await api()
          .put(path)
          .set('Authorization', granter.bearer)
          .send({ role_ids: [reader] })
      ).status,
    ).toBe(200);
    expect((await api().get(path).set('Authorization', root)).body.group.role_ids).toEqual([reader]);

    // A role a super_admin mapped is kept by the granter's changes (keeping it grants nothing new), and the console's
    // group page, which does not offer it to them, keeps it in its form.
    await api()
      .put(path)
      .set('Authorization', root)
      .send({ role_ids: [clerk] })
      .expect(200);
    expect(
      (
        await api()
          .put(path)
          .set('Authorization', granter.bearer)
          .send({ role_ids: [clerk, reader] })
      ).status,
    ).toBe(200);
    expect((await api().get(path).set('Authorization', root)).body.group.role_ids.sort()).toEqual([clerk, reader].sort());
    // The console is for the admin tier: the granter is a manager too from here on.
    await grantRole(t, granter.user.id, 'manager');
    const page = await granter.agent.get(`/admin/scim-groups/${group.body.id as string}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<input type="hidden" name="role_ids" value="${clerk}"`);
    expect(page.text).not.toMatch(new RegExp(`type="checkbox"[^>]*value="${clerk}"`));
    expect(page.text).toMatch(new RegExp(`type="checkbox"[^>]*value="${reader}"`));
  });

  test('an import whose rows carry such a role is refused as a whole', async () => {
    const clerkName = (await t.db('roles').where({ id: clerk }).first('name')).name as string;
    const email = uniqueEmail('imported');
    const res = await api()
      .post('/api/admin/users/import')
      .set('Authorization', granter.bearer)
      .send([{ email, first_name: 'Im', last_name: 'Ported', roles: [clerkName] }]);
    expect(res.status).toBe(400);
    expect(res.body.details[0]).toMatchObject({ row: 1, email });
    expect(res.body.details[0].message).toContain('orders:write');
    expect(await t.db('users').where({ email }).first()).toBeUndefined();
  });
});

describe('granting a role with permissions (unchanged rule)', () => {
  test('a global role with a permission the granter lacks is refused and not offered', async () => {
    const granterRole = await makeRole({ permissions: MANAGES_ROLES });
    const granter = await holderOf([granterRole]);
    const deleter = await makeRole({ permissions: ['users:delete'] });
    const target = await makeUser(t);
    const res = await api().post(`/api/users/${target.id}/roles`).set('Authorization', granter.bearer).send({ role_id: deleter });
    expect(res.status).toBe(403);
    const offered = await api().get('/api/users/roles/assignable').set('Authorization', granter.bearer);
    expect((offered.body.roles as Array<{ id: string }>).map((r) => r.id)).not.toContain(deleter);
  });
});

import request from 'supertest';
import { makeSignedInUser, makeUser, uniqueEmail } from '../helpers/factories';
import { makeRole, roleIdByName } from '../helpers/rbac';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * The OpenAPI description (src/routes/docs/openapi.ts) must say what the routes really answer: the documented
 * success status of an operation is the one it returns, and the documented body fields are the real ones.
 */
let t: TestApp;
let doc: {
  paths: Record<string, Record<string, { responses: Record<string, { description: string }>; requestBody?: { required: boolean } }>>;
};
let superAdmin: string;

beforeAll(async () => {
  t = await createTestApp();
  superAdmin = (await makeSignedInUser(t, ['super_admin'])).bearer;
  doc = (await request(t.app).get('/api/openapi.json')).body;
});
afterAll(async () => {
  await t.close();
});

const api = () => request(t.app);
const op = (path: string, method: string) => doc.paths[path]![method]!;
const successOf = (path: string, method: string) => Object.keys(op(path, method).responses).find((s) => /^[23]/.test(s));

describe('OpenAPI success statuses and bodies match the routes', () => {
  test('GET /api/rbac/users/{userId}/permissions: { user_id, roles, permissions }', async () => {
    const user = await makeUser(t, { roles: ['manager'] });
    const res = await api().get(`/api/rbac/users/${user.id}/permissions`).set('Authorization', superAdmin);
    expect(String(res.status)).toBe(successOf('/api/rbac/users/{userId}/permissions', 'get'));
    expect(Object.keys(res.body).sort()).toEqual(['permissions', 'roles', 'user_id']);
    expect(op('/api/rbac/users/{userId}/permissions', 'get').responses['200']!.description).toContain('user_id');
  });

  test('admin lists and the permission catalogue are described with their real fields', async () => {
    for (const path of ['/api/rbac/admin-users', '/api/users/admin/list']) {
      const res = await api().get(path).set('Authorization', superAdmin);
      expect(String(res.status)).toBe(successOf(path, 'get'));
      expect(Object.keys(res.body)).toEqual(['users']);
      expect(res.body.users[0]).toHaveProperty('adminRole');
      expect(op(path, 'get').responses['200']!.description).toContain('{ users }');
    }
    const catalogue = await api().get('/api/rbac/permissions').set('Authorization', superAdmin);
    expect(Object.keys(catalogue.body)).toEqual(['permissions']);
    expect(op('/api/rbac/permissions', 'get').responses['200']!.description).toContain('{ permissions');
  });

  test('role assignment 201 (200 when held), removal 204, deactivating super_admin 409: all documented', async () => {
    const user = await makeUser(t);
    const role = await makeRole(t, { permissions: ['users:read'] });
    const first = await api().post(`/api/rbac/users/${user.id}/roles`).set('Authorization', superAdmin).send({ role_id: role.id });
    expect(String(first.status)).toBe(successOf('/api/rbac/users/{userId}/roles', 'post'));
    const removed = await api().delete(`/api/rbac/users/${user.id}/roles/${role.id}`).set('Authorization', superAdmin);
    expect(String(removed.status)).toBe(successOf('/api/rbac/users/{userId}/roles/{roleId}', 'delete'));

    const superAdminRole = await roleIdByName(t, 'super_admin');
    const refused = await api().delete(`/api/rbac/roles/${superAdminRole}`).set('Authorization', superAdmin);
    expect(refused.status).toBe(409);
    expect(op('/api/rbac/roles/{roleId}', 'delete').responses).toHaveProperty('409');
    expect(op('/api/users/roles/{roleId}', 'delete').responses).toHaveProperty('409');
  });

  test('POST /api/users answers 201 { user }; client creation 201, rotation 200', async () => {
    const invited = await api()
      .post('/api/users')
      .set('Authorization', superAdmin)
      .send({ email: uniqueEmail('invite'), first_name: 'A', last_name: 'B' });
    expect(String(invited.status)).toBe(successOf('/api/users', 'post'));
    expect(Object.keys(invited.body)).toEqual(['user']);

    const created = await api()
      .post('/api/admin/oauth-clients')
      .set('Authorization', superAdmin)
      .send({ name: 'Docs', redirect_uri: 'https://docs.test/cb' });
    expect(String(created.status)).toBe(successOf('/api/admin/oauth-clients', 'post'));
    const rotated = await api()
      .post(`/api/admin/oauth-clients/${created.body.client.client_id}/rotate-secret`)
      .set('Authorization', superAdmin);
    expect(String(rotated.status)).toBe(successOf('/api/admin/oauth-clients/{clientId}/rotate-secret', 'post'));
    expect(Object.keys(rotated.body).sort()).toEqual(['client_id', 'client_secret']);
  });

  test('userinfo is routed for POST as well as GET, and both are described', async () => {
    const user = await makeSignedInUser(t);
    for (const method of ['get', 'post'] as const) {
      const res = await api()[method]('/api/oauth/userinfo').set('Authorization', user.bearer);
      expect(String(res.status)).toBe(successOf('/api/oauth/userinfo', method));
      expect(res.body.sub).toBe(user.user.id);
    }
  });

  test('refresh-token works from the cookie alone, so its request body is documented as optional', async () => {
    const user = await makeSignedInUser(t);
    const res = await user.agent.post('/api/auth/refresh-token');
    expect(String(res.status)).toBe(successOf('/api/auth/refresh-token', 'post'));
    expect(op('/api/auth/refresh-token', 'post').requestBody!.required).toBe(false);
  });
});

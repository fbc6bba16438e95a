import { makeSignedInUser, makeUser } from '../helpers/factories';
import { makeRole } from '../helpers/rbac';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Security review (docs/security.md, "Sixth review"): a console action reads other endpoints of the API for its page
 * (`call()`: the name a confirmation shows), and those reads are guarded as the endpoints themselves are. Before the
 * fix, a manager who also held `users:manage_roles` read a role (GET /api/rbac/roles/:roleId is the spec's `admin`)
 * through the confirmation of removing it from a user.
 */
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

test("a console action's page never reads an endpoint its caller may not call", async () => {
  const secret = await makeRole(t, { name: 'payroll-auditors-secret', permissions: [] });
  const target = await makeUser(t);
  await t.db('user_roles').insert({ user_id: target.id, role_id: secret.id });
  const manager = await makeSignedInUser(t, ['manager']);
  const extra = await makeRole(t, { permissions: ['users:manage_roles'] });
  await t.db('user_roles').insert({ user_id: manager.user.id, role_id: extra.id });
  // The API itself refuses the role to a manager.
  const api = await manager.agent.get(`/api/rbac/roles/${secret.id}`);
  expect(api.status).toBe(403);

  const csrf = csrfOf((await manager.agent.get('/admin/users').set('Accept-Language', 'en')).text);
  const ask = await manager.agent
    .post(`/admin/users/${target.id}/roles/${secret.id}/remove`)
    .set('Accept-Language', 'en')
    .type('form')
    .send({ csrf });
  expect(ask.status).toBe(403);
  expect(ask.text).not.toContain('payroll-auditors-secret');
});

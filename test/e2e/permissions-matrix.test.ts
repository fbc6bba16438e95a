import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { makeClient, makeSignedInUser, makeUser, uniqueEmail } from '../helpers/factories';
import { CATALOGUE, makeRole, makeUserWithPermissions } from '../helpers/rbac';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Every endpoint of spec §4.4-4.6 against its guard: no token -> 401, signed in without the permission -> 403,
 * the holder -> 2xx. Permission holders get a fresh role with exactly that permission, so the permission (not an
 * admin-tier role name) is what opens the door.
 */

type Guard = { permission: string } | 'admin' | 'super_admin';
type Method = 'get' | 'post' | 'put' | 'delete';
interface Prepared {
  path: string;
  body?: Record<string, unknown>;
}
interface Row {
  method: Method;
  /** The spec's path, for the test name. */
  route: string;
  guard: Guard;
  status: number;
  /** Builds fresh fixtures, so a destructive success case never affects another case. */
  prepare: (t: TestApp) => Promise<Prepared>;
}

const suffix = () => randomBytes(4).toString('hex');
const fixed = (path: string, body?: Record<string, unknown>) => async (): Promise<Prepared> => ({ path, body });
const withUser = (build: (userId: string) => Prepared) => async (t: TestApp) => build((await makeUser(t)).id);
const withRole = (build: (roleId: string) => Prepared) => async (t: TestApp) => build((await makeRole(t)).id);
const withClient = (build: (clientId: string) => Prepared) => async (t: TestApp) => build((await makeClient(t)).clientId);
const withUserAndRole = (build: (userId: string, roleId: string) => Prepared) => async (t: TestApp) => {
  const user = await makeUser(t);
  const role = await makeRole(t);
  await t.db('user_roles').insert({ user_id: user.id, role_id: role.id });
  return build(user.id, role.id);
};

const ROWS: Row[] = [
  // §4.4 Users
  { method: 'get', route: '/api/users', guard: { permission: 'users:read' }, status: 200, prepare: fixed('/api/users') },
  {
    method: 'post',
    route: '/api/users',
    guard: { permission: 'users:write' },
    status: 201,
    prepare: async () => ({ path: '/api/users', body: { email: uniqueEmail('invite'), first_name: 'In', last_name: 'Vited' } }),
  },
  { method: 'get', route: '/api/users/admin/list', guard: { permission: 'system:manage_users' }, status: 200, prepare: fixed('/api/users/admin/list') },
  { method: 'get', route: '/api/users/roles/list', guard: { permission: 'system:manage_roles' }, status: 200, prepare: fixed('/api/users/roles/list') },
  {
    method: 'post',
    route: '/api/users/roles',
    guard: 'super_admin',
    status: 201,
    prepare: async () => ({ path: '/api/users/roles', body: { name: `matrix-${suffix()}` } }),
  },
  {
    method: 'put',
    route: '/api/users/roles/:roleId',
    guard: 'super_admin',
    status: 200,
    prepare: withRole((id) => ({ path: `/api/users/roles/${id}`, body: { description: 'changed' } })),
  },
  { method: 'delete', route: '/api/users/roles/:roleId', guard: 'super_admin', status: 200, prepare: withRole((id) => ({ path: `/api/users/roles/${id}` })) },
  { method: 'get', route: '/api/users/:userId', guard: { permission: 'users:read' }, status: 200, prepare: withUser((id) => ({ path: `/api/users/${id}` })) },
  {
    method: 'put',
    route: '/api/users/:userId',
    guard: { permission: 'users:write' },
    status: 200,
    prepare: withUser((id) => ({ path: `/api/users/${id}`, body: { first_name: 'Renamed' } })),
  },
  { method: 'delete', route: '/api/users/:userId', guard: { permission: 'users:delete' }, status: 200, prepare: withUser((id) => ({ path: `/api/users/${id}` })) },
  {
    method: 'get',
    route: '/api/users/:userId/roles',
    guard: { permission: 'users:read' },
    status: 200,
    prepare: withUser((id) => ({ path: `/api/users/${id}/roles` })),
  },
  {
    method: 'post',
    route: '/api/users/:userId/roles',
    guard: { permission: 'users:manage_roles' },
    status: 201,
    prepare: async (t) => {
      const user = await makeUser(t);
      const role = await makeRole(t);
      return { path: `/api/users/${user.id}/roles`, body: { role_id: role.id } };
    },
  },
  {
    method: 'delete',
    route: '/api/users/:userId/roles/:roleId',
    guard: { permission: 'users:manage_roles' },
    status: 204,
    prepare: withUserAndRole((userId, roleId) => ({ path: `/api/users/${userId}/roles/${roleId}` })),
  },

  // §4.5 RBAC
  { method: 'get', route: '/api/rbac/permissions', guard: 'admin', status: 200, prepare: fixed('/api/rbac/permissions') },
  { method: 'get', route: '/api/rbac/roles', guard: 'admin', status: 200, prepare: fixed('/api/rbac/roles') },
  {
    method: 'post',
    route: '/api/rbac/roles',
    guard: 'super_admin',
    status: 201,
    prepare: async () => ({ path: '/api/rbac/roles', body: { name: `matrix-${suffix()}`, application: 'crm' } }),
  },
  {
    method: 'put',
    route: '/api/rbac/roles/:roleId',
    guard: 'super_admin',
    status: 200,
    prepare: withRole((id) => ({ path: `/api/rbac/roles/${id}`, body: { permissions: ['users:read'] } })),
  },
  { method: 'delete', route: '/api/rbac/roles/:roleId', guard: 'super_admin', status: 200, prepare: withRole((id) => ({ path: `/api/rbac/roles/${id}` })) },
  {
    method: 'get',
    route: '/api/rbac/users/:userId/roles',
    guard: { permission: 'users:read' },
    status: 200,
    prepare: withUser((id) => ({ path: `/api/rbac/users/${id}/roles` })),
  },
  {
    method: 'post',
    route: '/api/rbac/users/:userId/roles',
    guard: { permission: 'users:manage_roles' },
    status: 201,
    prepare: async (t) => {
      const user = await makeUser(t);
      const role = await makeRole(t, { application: 'crm' });
      return { path: `/api/rbac/users/${user.id}/roles`, body: { role: role.name, application: 'crm' } };
    },
  },
  {
    method: 'delete',
    route: '/api/rbac/users/:userId/roles/:roleId',
    guard: { permission: 'users:manage_roles' },
    status: 204,
    prepare: withUserAndRole((userId, roleId) => ({ path: `/api/rbac/users/${userId}/roles/${roleId}` })),
  },
  {
    method: 'get',
    route: '/api/rbac/users/:userId/permissions',
    guard: { permission: 'users:read' },
    status: 200,
    prepare: withUser((id) => ({ path: `/api/rbac/users/${id}/permissions` })),
  },
  {
    method: 'post',
    route: '/api/rbac/users/:userId/check-permission',
    guard: { permission: 'users:read' },
    status: 200,
    prepare: withUser((id) => ({ path: `/api/rbac/users/${id}/check-permission`, body: { permission: 'users:read' } })),
  },
  { method: 'get', route: '/api/rbac/admin-users', guard: { permission: 'system:manage_users' }, status: 200, prepare: fixed('/api/rbac/admin-users') },

  // §4.6 Admin
  { method: 'get', route: '/api/admin/summary', guard: 'admin', status: 200, prepare: fixed('/api/admin/summary') },
  { method: 'get', route: '/api/admin/oauth-clients', guard: { permission: 'oauth_clients:read' }, status: 200, prepare: fixed('/api/admin/oauth-clients') },
  {
    method: 'get',
    route: '/api/admin/oauth-clients/:clientId',
    guard: { permission: 'oauth_clients:read' },
    status: 200,
    prepare: withClient((id) => ({ path: `/api/admin/oauth-clients/${id}` })),
  },
  {
    method: 'post',
    route: '/api/admin/oauth-clients',
    guard: { permission: 'oauth_clients:write' },
    status: 201,
    prepare: fixed('/api/admin/oauth-clients', { name: 'Matrix', redirect_uri: 'https://matrix.test/cb', scopes: 'openid' }),
  },
  {
    method: 'put',
    route: '/api/admin/oauth-clients/:clientId',
    guard: { permission: 'oauth_clients:write' },
    status: 200,
    prepare: withClient((id) => ({ path: `/api/admin/oauth-clients/${id}`, body: { name: 'Renamed' } })),
  },
  {
    method: 'post',
    route: '/api/admin/oauth-clients/:clientId/rotate-secret',
    guard: { permission: 'oauth_clients:rotate_secret' },
    status: 200,
    prepare: withClient((id) => ({ path: `/api/admin/oauth-clients/${id}/rotate-secret` })),
  },
  {
    method: 'delete',
    route: '/api/admin/oauth-clients/:clientId',
    guard: { permission: 'oauth_clients:delete' },
    status: 200,
    prepare: withClient((id) => ({ path: `/api/admin/oauth-clients/${id}` })),
  },
];

let t: TestApp;
let plain: string;
let admin: string;
let manager: string;
let superAdmin: string;
/** Holds every catalogue permission through a custom role, but no admin-tier role. */
let everyPermissionNoAdminRole: string;
const holders = new Map<string, string>();

beforeAll(async () => {
  t = await createTestApp();
  plain = (await makeSignedInUser(t)).bearer;
  admin = (await makeSignedInUser(t, ['admin'])).bearer;
  manager = (await makeSignedInUser(t, ['manager'])).bearer;
  superAdmin = (await makeSignedInUser(t, ['super_admin'])).bearer;
  everyPermissionNoAdminRole = (await makeUserWithPermissions(t, [...CATALOGUE])).bearer;
});
afterAll(async () => {
  await t.close();
});

async function holderOf(permission: string): Promise<string> {
  if (!holders.has(permission)) holders.set(permission, (await makeUserWithPermissions(t, [permission])).bearer);
  return holders.get(permission)!;
}

async function call(row: Row, bearer?: string) {
  const { path, body } = await row.prepare(t);
  let req = request(t.app)[row.method](path);
  if (bearer) req = req.set('Authorization', bearer);
  return body ? req.send(body) : req;
}

function guardName(guard: Guard): string {
  return typeof guard === 'string' ? `role ${guard}` : `permission ${guard.permission}`;
}

test('the table covers all 31 endpoints of spec §4.4-4.6 once', () => {
  const keys = ROWS.map((r) => `${r.method} ${r.route}`);
  expect(new Set(keys).size).toBe(31);
});

describe.each(ROWS)('$method $route', (row) => {
  test('no access token -> 401 unauthorized', async () => {
    const res = await call(row);
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('unauthorized');
  });

  test('a garbage access token -> 401 unauthorized', async () => {
    const res = await call(row, 'Bearer not-a-jwt');
    expect(res.status).toBe(401);
  });

  test(`signed in without ${guardName(row.guard)} -> 403 forbidden`, async () => {
    const res = await call(row, plain);
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('forbidden');
  });

  if (typeof row.guard === 'object') {
    const { permission } = row.guard;

    test(`holder of ${permission} (and nothing else) -> ${row.status}`, async () => {
      const res = await call(row, await holderOf(permission));
      expect(res.status).toBe(row.status);
    });

    test(`every other permission but not ${permission} -> 403`, async () => {
      const { bearer } = await makeUserWithPermissions(t, CATALOGUE.filter((p) => p !== permission));
      expect((await call(row, bearer)).status).toBe(403);
    });

    test(`${permission} through an application-scoped role only -> 403 (only global roles govern this server)`, async () => {
      const { bearer } = await makeUserWithPermissions(t, [permission], 'some-app');
      expect((await call(row, bearer)).status).toBe(403);
    });

    test(`super_admin (holds every permission) -> ${row.status}`, async () => {
      expect((await call(row, superAdmin)).status).toBe(row.status);
    });
  }

  if (row.guard === 'admin') {
    test(`role admin -> ${row.status}`, async () => {
      expect((await call(row, admin)).status).toBe(row.status);
    });
    test(`role super_admin -> ${row.status}`, async () => {
      expect((await call(row, superAdmin)).status).toBe(row.status);
    });
    test('role manager -> 403', async () => {
      expect((await call(row, manager)).status).toBe(403);
    });
    test('every catalogue permission without the admin role -> 403', async () => {
      expect((await call(row, everyPermissionNoAdminRole)).status).toBe(403);
    });
  }

  if (row.guard === 'super_admin') {
    test(`role super_admin -> ${row.status}`, async () => {
      expect((await call(row, superAdmin)).status).toBe(row.status);
    });
    test('role admin -> 403', async () => {
      expect((await call(row, admin)).status).toBe(403);
    });
    test('every catalogue permission without the super_admin role -> 403', async () => {
      expect((await call(row, everyPermissionNoAdminRole)).status).toBe(403);
    });
  }
});

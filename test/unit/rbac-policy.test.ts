import {
  adminRank,
  hasPermission,
  mayGrantRole,
  mayHandOutRole,
  mayManageUser,
  mayRemoveRole,
  mayTakeOverUser,
  mayUpdateRole,
  strictlyOutranks,
  type Actor,
  type GrantableRole,
  type Granter,
  type HeldApiScope,
  type RoleFacts,
  type Verdict,
} from '../../src/services/rbac-policy';

/** The RBAC rules (docs/rbac.md) as tables: actor × target × expected. No database. */

const actor = (roleNames: readonly string[], permissions: readonly string[] = []): Actor => ({ userId: 'actor', roleNames, permissions });
const role = (name: string, permissions: readonly string[] = [], application: string | null = null, isActive = true): RoleFacts => ({
  name,
  application,
  permissions,
  isActive,
});
const account = (roles: RoleFacts[], permissions: string[] = []) => ({ roles, permissions });
const outcome = (v: Verdict) => (v.allowed ? 'allowed' : v.code);

const PLAIN = actor([]);
const READER = actor(['reader'], ['users:read']);
const WRITER = actor(['writer'], ['users:read', 'users:write']);
const MANAGER = actor(['manager'], ['users:read', 'users:write']);
const ADMIN = actor(['admin'], ['users:read', 'users:write', 'users:manage_roles']);
const SUPER = actor(['super_admin']);

test.each([
  ['super_admin', SUPER, 'oauth_clients:delete', true],
  ['a holder', READER, 'users:read', true],
  ['a holder of another permission', READER, 'users:write', false],
  ['admin without the permission', ADMIN, 'oauth_clients:read', false],
  ['nobody', PLAIN, 'users:read', false],
] as const)('hasPermission: %s, %s -> %s', (_who, a, permission, expected) => {
  expect(hasPermission(a, permission)).toBe(expected);
});

test.each([
  [['super_admin', 'manager'], 3],
  [['admin'], 2],
  [['manager', 'custom'], 1],
  [['custom'], 0],
  [[], 0],
] as const)('adminRank(%j) = %i', (names, rank) => {
  expect(adminRank(names)).toBe(rank);
});

describe('mayManageUser: the target holds no right the actor lacks', () => {
  test.each([
    ['super_admin', 'a super_admin', SUPER, account([role('super_admin')]), 'allowed'],
    ['admin', 'a super_admin', ADMIN, account([role('super_admin')]), 'forbidden'],
    ['admin', 'an admin', ADMIN, account([role('admin')], ['users:read']), 'allowed'],
    ['manager', 'an admin', MANAGER, account([role('admin')]), 'forbidden'],
    ['manager', 'a plain user', MANAGER, account([]), 'allowed'],
    ['writer', 'a holder of users:manage_roles', WRITER, account([role('custom')], ['users:manage_roles']), 'forbidden'],
    ['writer', 'a holder of users:read', WRITER, account([role('custom')], ['users:read']), 'allowed'],
    ['manager', 'an application-scoped "admin"', MANAGER, account([role('admin', [], 'crm')]), 'allowed'],
    ['plain user', 'a plain user', PLAIN, account([]), 'allowed'],
  ] as const)('%s -> %s: %s', (_a, _t, a, target, expected) => {
    expect(outcome(mayManageUser(a, target))).toBe(expected);
  });
});

describe('mayGrantRole: active, super_admin only by a super_admin, never above the actor', () => {
  test.each([
    ['super_admin', 'super_admin', SUPER, role('super_admin'), 'allowed'],
    ['admin', 'super_admin', ADMIN, role('super_admin'), 'forbidden'],
    ['admin', 'admin', ADMIN, role('admin', ['users:read']), 'allowed'],
    ['manager', 'admin', MANAGER, role('admin'), 'forbidden'],
    ['manager', 'a role with a permission it lacks', MANAGER, role('custom', ['users:delete']), 'forbidden'],
    ['manager', 'a role with its own permissions', MANAGER, role('custom', ['users:read']), 'allowed'],
    ['manager', 'an application role with any permission', MANAGER, role('editor', ['users:delete'], 'crm'), 'allowed'],
    ['super_admin', 'a deactivated role', SUPER, role('custom', [], null, false), 'conflict'],
    ['plain user', 'an empty role', PLAIN, role('custom'), 'allowed'],
  ] as const)('%s grants %s: %s', (_a, _r, a, r, expected) => {
    expect(outcome(mayGrantRole({ ...a, apiScopes: [] }, { ...r, apiScopes: [] }))).toBe(expected);
  });
});

describe('mayHandOutRole: every API scope of the role held for its application (admin and super_admin excepted)', () => {
  const API = 'https://orders.test/';
  const held = (scope: string, application: string | null = null): HeldApiScope => ({ resource: API, scope, application });
  const granter = (a: Actor, apiScopes: HeldApiScope[]): Granter => ({ ...a, apiScopes });
  const carrying = (scopes: string[], application: string | null = null, name = 'clerk'): GrantableRole => ({
    ...role(name, [], application),
    apiScopes: scopes.map((scope) => ({ resource: API, scope })),
  });
  const GRANTER = actor(['granter'], ['users:manage_roles']);
  test.each([
    ['holds nothing', granter(GRANTER, []), carrying(['orders:write']), 'forbidden'],
    ['holds it globally', granter(GRANTER, [held('orders:write')]), carrying(['orders:write']), 'allowed'],
    ['holds one of two', granter(GRANTER, [held('orders:read')]), carrying(['orders:read', 'orders:write']), 'forbidden'],
    ['holds it for crm only, global role', granter(GRANTER, [held('orders:write', 'crm')]), carrying(['orders:write']), 'forbidden'],
    ['holds it for crm, crm role', granter(GRANTER, [held('orders:write', 'crm')]), carrying(['orders:write'], 'crm'), 'allowed'],
    ['holds it for erp, crm role', granter(GRANTER, [held('orders:write', 'erp')]), carrying(['orders:write'], 'crm'), 'forbidden'],
    ['holds it globally, crm role', granter(GRANTER, [held('orders:write')]), carrying(['orders:write'], 'crm'), 'allowed'],
    [
      'same scope name of another resource',
      granter(GRANTER, [{ resource: 'https://other.test/', scope: 'orders:write', application: null }]),
      carrying(['orders:write']),
      'forbidden',
    ],
    ['admin, holds nothing', granter(ADMIN, []), carrying(['orders:write'], 'crm'), 'allowed'],
    ['super_admin, holds nothing', granter(SUPER, []), carrying(['orders:write']), 'allowed'],
    ['manager, holds nothing', granter(MANAGER, []), carrying(['orders:write']), 'forbidden'],
    ['a role without scopes', granter(GRANTER, []), carrying([]), 'allowed'],
  ] as const)('%s: %s', (_why, g, r, expected) => {
    expect(outcome(mayHandOutRole(g, r))).toBe(expected);
  });

  test('a deactivated role is handed out by the rule but not granted', () => {
    const dormant = { ...carrying([]), isActive: false };
    expect(outcome(mayHandOutRole(granter(GRANTER, []), dormant))).toBe('allowed');
    expect(outcome(mayGrantRole(granter(GRANTER, []), dormant))).toBe('conflict');
  });
});

describe('strictlyOutranks / mayTakeOverUser: strictly more rights than every role held', () => {
  test.each([
    ['super_admin', 'super_admin', SUPER, role('super_admin'), false],
    ['super_admin', 'admin', SUPER, role('admin', ['users:delete']), true],
    ['admin', 'admin (peers)', ADMIN, role('admin', ADMIN.permissions), false],
    ['admin', 'manager', ADMIN, role('manager', ['users:read']), true],
    ['manager', 'manager (peers)', MANAGER, role('manager', MANAGER.permissions), false],
    ['manager', 'a role with fewer permissions', MANAGER, role('custom', ['users:read']), true],
    ['writer', 'a role with the same permissions', WRITER, role('custom', WRITER.permissions), false],
    ['writer', 'an application role with a permission it lacks', WRITER, role('editor', ['users:delete'], 'crm'), false],
    ['writer', 'a deactivated admin role', WRITER, role('admin', [], null, false), false],
  ] as const)('%s over %s: %s', (_a, _r, a, r, expected) => {
    expect(strictlyOutranks(a, r)).toBe(expected);
    expect(outcome(mayTakeOverUser(a, [r], 'Changing the email'))).toBe(expected ? 'allowed' : 'forbidden');
  });

  test('an account without roles can be taken over by anyone with a right; the refusal names the role', () => {
    expect(outcome(mayTakeOverUser(WRITER, [], 'Changing the email'))).toBe('allowed');
    const refused = mayTakeOverUser(MANAGER, [role('custom', ['users:read']), role('admin')], 'Changing the email');
    expect(refused).toEqual({
      allowed: false,
      code: 'forbidden',
      reason: "Changing the email needs strictly more rights than the account's role admin",
    });
  });
});

test.each([
  ['super_admin', 'super_admin', SUPER, role('super_admin'), 'allowed'],
  ['admin', 'super_admin', ADMIN, role('super_admin'), 'forbidden'],
  ['admin', 'an application "super_admin"', ADMIN, role('super_admin', [], 'crm'), 'allowed'],
  ['manager', 'a custom role', MANAGER, role('custom'), 'allowed'],
] as const)('mayRemoveRole: %s removes %s: %s', (_a, _r, a, r, expected) => {
  expect(outcome(mayRemoveRole(a, r))).toBe(expected);
});

test.each([
  ['rename a built-in role', role('admin'), { name: 'boss' }, 'conflict'],
  ['keep a built-in name', role('admin'), { name: 'admin' }, 'allowed'],
  ['rename an application "admin"', role('admin', [], 'crm'), { name: 'boss' }, 'allowed'],
  ["edit super_admin's permissions", role('super_admin'), { permissions: ['users:read'] }, 'conflict'],
  ['deactivate super_admin', role('super_admin'), { isActive: false }, 'conflict'],
  ['deactivate admin', role('admin'), { isActive: false }, 'allowed'],
  ['edit a custom role', role('custom'), { name: 'other', permissions: [] }, 'allowed'],
  ['re-point an application role', role('agent', [], 'crm'), { application: 'client_abc' }, 'allowed'],
  ['make an application role global', role('agent', [], 'crm'), { application: null }, 'conflict'],
  ['scope a global role', role('custom'), { application: 'crm' }, 'conflict'],
  ['keep a global role global', role('custom'), { application: null }, 'allowed'],
] as const)('mayUpdateRole: %s -> %s', (_what, r, patch, expected) => {
  expect(outcome(mayUpdateRole(r, patch))).toBe(expected);
});

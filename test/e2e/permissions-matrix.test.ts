import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { insertRegistrationToken } from '../../src/db/repositories/registration-tokens.repo';
import { insertScimConnection, insertScimGroup } from '../../src/db/repositories/scim.repo';
import { insertWebhookSubscription } from '../../src/db/repositories/webhooks.repo';
import { sha256Hex } from '../../src/lib/crypto';
import { guardOf, listDeclaredRoutes, type DeclaredAppRoute, type Guard } from '../../src/routes/route-table';
import { ADMIN_TIER } from '../../src/services/principal';
import { makeApiResource } from '../helpers/apps';
import { makeClient, makeSignedInUser, makeUser, signIn, uniqueEmail } from '../helpers/factories';
import { CATALOGUE, makeRole, makeUserWithPermissions } from '../helpers/rbac';
import { createTestApp, type TestApp } from '../helpers/test-app';
import { makeIdentityProvider } from '../helpers/upstream';

/**
 * Every guarded route of the real app, read from its declarations (src/routes/route.ts), against its guard: no
 * token -> 401, signed in with too few rights -> 403, exactly enough -> the declared success status. Permission
 * holders get a fresh role with exactly that permission, so the permission (not an admin-tier role name) is what
 * opens the door. A new guarded route is in the matrix by being declared; only its fixtures are listed here, and a
 * route whose fixtures are missing fails the first test.
 */

const suffix = () => randomBytes(4).toString('hex');

/** Fresh fixtures for one call, created on demand. */
interface Fixtures {
  role(): Promise<{ id: string; name: string }>;
  appRole(application: string): Promise<{ id: string; name: string }>;
}

/** Request bodies of the guarded routes that take one, by `METHOD path` as declared. */
const BODIES: Record<string, (f: Fixtures) => Promise<Record<string, unknown>> | Record<string, unknown>> = {
  'POST /api/users': () => ({ email: uniqueEmail('invite'), first_name: 'In', last_name: 'Vited' }),
  // The import's body is an array of rows (docs/passwords.md).
  'POST /api/admin/users/import': () =>
    [{ email: uniqueEmail('import'), first_name: 'Im', last_name: 'Port' }] as unknown as Record<string, unknown>,
  'PUT /api/users/:userId': () => ({ first_name: 'Renamed' }),
  'POST /api/users/roles': () => ({ name: `matrix-${suffix()}` }),
  'PUT /api/users/roles/:roleId': () => ({ description: 'changed' }),
  'POST /api/users/:userId/roles': async (f) => ({ role_id: (await f.role()).id }),
  'POST /api/rbac/roles': () => ({ name: `matrix-${suffix()}`, application: 'crm' }),
  'PUT /api/rbac/roles/:roleId': () => ({ permissions: ['users:read'] }),
  'POST /api/rbac/users/:userId/roles': async (f) => ({ role: (await f.appRole('crm')).name, application: 'crm' }),
  'POST /api/rbac/users/:userId/check-permission': () => ({ permission: 'users:read' }),
  'POST /api/admin/oauth-clients': () => ({ name: 'Matrix', redirect_uri: 'https://matrix.test/cb', scopes: 'openid' }),
  'PUT /api/admin/oauth-clients/:clientId': () => ({ name: 'Renamed' }),
  'POST /api/admin/api-resources': () => ({ identifier: `https://matrix-${suffix()}.test/`, name: 'Matrix API' }),
  'PUT /api/admin/api-resources/:resourceId': () => ({ name: 'Renamed API' }),
  'POST /api/admin/webhooks': () => ({ url: 'https://93.184.215.14/hook', events: ['user.*'] }),
  'PUT /api/admin/webhooks/:webhookId': () => ({ description: 'changed' }),
  // The github preset needs no discovery request (an oidc provider would be fetched when saved).
  'POST /api/admin/identity-providers': () => ({ preset: 'github', slug: `matrix-${suffix()}`, client_id: 'id', client_secret: 'secret' }),
  'PUT /api/admin/identity-providers/:providerId': () => ({ name: 'Renamed' }),
  'POST /api/admin/saml-apps': () => ({
    name: 'Matrix',
    entity_id: `https://matrix-${suffix()}.test/sp`,
    acs_urls: [{ url: 'https://matrix.test/acs' }],
  }),
  'PUT /api/admin/saml-apps/:appId': () => ({
    name: 'Renamed',
    entity_id: `https://matrix-${suffix()}.test/sp`,
    acs_urls: [{ url: 'https://matrix.test/acs' }],
  }),
  'POST /api/admin/registration-tokens': () => ({ expires_in_s: 3600, max_uses: 2 }),
  'POST /api/admin/scim-connections': () => ({ name: `matrix-${suffix()}` }),
  'PUT /api/admin/scim-groups/:groupId/roles': async (f) => ({ role_ids: [(await f.appRole('crm')).id] }),
  // A harmless runtime setting (CONTRACT §18): the brand name.
  'PATCH /api/admin/settings': () => ({ brand_name: `Matrix ${suffix()}` }),
  'POST /api/admin/settings/test-mail': () => ({ to: 'ops@example.test' }),
};

/** Path parameters by name: a fresh row each call. */
const PARAMS = [
  'userId',
  'roleId',
  'clientId',
  'resourceId',
  'sessionId',
  'webhookId',
  'deliveryId',
  'providerId',
  'tokenId',
  'connectionId',
  'groupId',
  'appId',
] as const;

let t: TestApp;
let routes: Array<DeclaredAppRoute & { guard: Guard; key: string; status: number }>;
let plain: string;
let superAdmin: string;
/** Holds every catalogue permission through a custom role, but no admin-tier role. */
let everyPermissionNoAdminRole: string;
const byRole = new Map<string, string>();
const holders = new Map<string, string>();

beforeAll(async () => {
  t = await createTestApp();
  // The console's pages (/admin) answer refusals as pages; test/e2e/console.test.ts holds them to their REST twins.
  routes = listDeclaredRoutes(t.app)
    .filter((r) => r.path.startsWith('/api/'))
    .flatMap((r) => {
      const guard = guardOf(r.decl);
      return guard ? [{ ...r, guard, key: `${r.method.toUpperCase()} ${r.path}`, status: r.decl.response?.status ?? 200 }] : [];
    });
  plain = (await makeSignedInUser(t)).bearer;
  for (const role of ADMIN_TIER) byRole.set(role, (await makeSignedInUser(t, [role])).bearer);
  superAdmin = byRole.get('super_admin')!;
  everyPermissionNoAdminRole = (await makeUserWithPermissions(t, [...CATALOGUE])).bearer;
});
afterAll(async () => {
  await t.close();
});

async function holderOf(permission: string): Promise<string> {
  if (!holders.has(permission)) holders.set(permission, (await makeUserWithPermissions(t, [permission])).bearer);
  return holders.get(permission)!;
}

async function makeSamlApp(): Promise<string> {
  const res = await request(t.app)
    .post('/api/admin/saml-apps')
    .set('Authorization', superAdmin)
    .send({ name: 'Matrix', entity_id: `https://matrix-${suffix()}.test/sp`, acs_urls: [{ url: 'https://matrix.test/acs' }] });
  return res.body.app.id as string;
}

/** The concrete path and body of one call, on fixtures of its own (a destructive success affects no other case). */
async function prepare(route: DeclaredAppRoute): Promise<{ path: string; body?: Record<string, unknown> }> {
  const fixtures: Fixtures = { role: () => makeRole(t), appRole: (application) => makeRole(t, { application }) };
  const ids: Record<string, string> = {};
  const names = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
  if (names.includes('userId')) {
    const user = await makeUser(t);
    ids.userId = user.id;
    // A session in the path of a user's route is one of that user's.
    if (names.includes('sessionId')) {
      await signIn(t, user);
      ids.sessionId = (await t.db('sessions').where({ user_id: user.id }).first('id')).id as string;
    }
  }
  if (names.includes('roleId')) ids.roleId = (await makeRole(t)).id;
  if (names.includes('clientId')) ids.clientId = (await makeClient(t)).clientId;
  if (names.includes('resourceId')) ids.resourceId = (await makeApiResource(t)).id;
  if (names.includes('webhookId')) ids.webhookId = await makeWebhook();
  if (names.includes('deliveryId')) ids.deliveryId = await makeDelivery(ids.webhookId!);
  if (names.includes('providerId')) ids.providerId = await makeIdentityProvider(t);
  if (names.includes('tokenId')) ids.tokenId = await makeRegistrationToken();
  if (names.includes('connectionId') || names.includes('groupId')) ids.connectionId = await makeScimConnection();
  if (names.includes('groupId')) ids.groupId = await makeScimGroup(ids.connectionId!);
  if (names.includes('appId')) ids.appId = await makeSamlApp();
  // Resending an invitation needs a pending one: an invited person who has not set a password yet.
  if (route.path === '/api/users/:userId/invitation') {
    await t
      .db('users')
      .where({ id: ids.userId })
      .update({ password_hash: null, invitation_expires_at: new Date(Date.now() + 3600_000) });
  }
  // A role in the path of a user's route is one the user holds (removal).
  if (ids.userId && ids.roleId) await t.db('user_roles').insert({ user_id: ids.userId, role_id: ids.roleId });
  const path = route.path.replace(/:(\w+)/g, (_m, name: string) => ids[name] ?? `:${name}`);
  const body = BODIES[`${route.method.toUpperCase()} ${route.path}`];
  return { path, body: body ? await body(fixtures) : undefined };
}

/** A SCIM connection (CONTRACT §20); its token is not needed. */
async function makeScimConnection(): Promise<string> {
  const id = randomUUID();
  await insertScimConnection(t.db, {
    id,
    name: `matrix-${suffix()}`,
    description: '',
    tokenHash: sha256Hex(id),
    createdBy: null,
    now: new Date(),
  });
  return id;
}

async function makeScimGroup(connectionId: string): Promise<string> {
  const id = randomUUID();
  await insertScimGroup(t.db, { id, connectionId, displayName: `matrix-${suffix()}`, externalId: null, now: new Date() });
  return id;
}

/** An initial access token of CONTRACT §13 (the token itself is not needed: its hash is). */
async function makeRegistrationToken(): Promise<string> {
  const id = randomUUID();
  const now = new Date();
  await insertRegistrationToken(t.db, {
    id,
    tokenHash: sha256Hex(randomUUID()),
    createdBy: null,
    maxUses: 1,
    now,
    expiresAt: new Date(now.getTime() + 3600_000),
  });
  return id;
}

/** A disabled webhook subscription (nothing is delivered from the matrix). */
async function makeWebhook(): Promise<string> {
  const id = randomUUID();
  const url = 'https://93.184.215.14/hook';
  await insertWebhookSubscription(t.db, { id, url, events: ['*'], enabled: false, description: '', secretSealed: 'x', now: new Date() });
  return id;
}

async function makeDelivery(webhookId: string): Promise<string> {
  const [row] = await t
    .db('webhook_deliveries')
    .insert({ subscription_id: webhookId, event_id: 1, event_type: 'user.created', status: 'failed' })
    .returning('id');
  return String(row.id);
}

async function call(route: DeclaredAppRoute, bearer?: string) {
  const { path, body } = await prepare(route);
  let req = request(t.app)[route.method](path);
  if (bearer) req = req.set('Authorization', bearer);
  return body ? req.send(body) : req;
}

/** Runs `check` on every route `which` selects and lists every route whose answer was not `expected`. */
async function expectEvery(
  which: (r: (typeof routes)[number]) => boolean,
  who: (r: (typeof routes)[number]) => Promise<string | undefined> | string | undefined,
  expected: (r: (typeof routes)[number]) => { status: number; error?: string },
): Promise<number> {
  const selected = routes.filter(which);
  const wrong: string[] = [];
  for (const route of selected) {
    const res = await call(route, await who(route));
    const want = expected(route);
    if (res.status !== want.status || (want.error !== undefined && res.body.error !== want.error)) {
      wrong.push(`${route.key}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)} (expected ${want.status})`);
    }
  }
  expect(wrong).toEqual([]);
  return selected.length;
}

const isPermission = (r: { guard: Guard }) => 'permission' in r.guard;
const isAdmin = (r: { guard: Guard }) => 'admin' in r.guard;
const rolesOf = (r: { guard: Guard }) => ('roles' in r.guard ? r.guard.roles : []);
const permissionOf = (r: { guard: Guard }) => ('permission' in r.guard ? r.guard.permission : '');
const ok = (r: { status: number }) => ({ status: r.status });
const refused = () => ({ status: 403, error: 'forbidden' });

test('the app declares guarded routes of every kind, and each has its fixtures', () => {
  expect(routes.filter(isPermission).length).toBeGreaterThan(0);
  expect(routes.filter(isAdmin).length).toBeGreaterThan(0);
  expect(routes.filter((r) => rolesOf(r).length > 0).length).toBeGreaterThan(0);
  const missing = routes.flatMap((r) => [
    ...[...r.path.matchAll(/:(\w+)/g)]
      .map((m) => m[1]!)
      .filter((p) => !PARAMS.some((known) => known === p))
      .map((p) => `${r.key}: no fixture for :${p}`),
    ...(r.decl.body && !r.decl.bodyOptional && !BODIES[r.key] ? [`${r.key}: no request body in BODIES`] : []),
  ]);
  expect(missing).toEqual([]);
  // Every fixture belongs to a guarded route (a renamed route must not leave a stale entry behind).
  expect(Object.keys(BODIES).filter((key) => !routes.some((r) => r.key === key))).toEqual([]);
});

describe('every guarded route', () => {
  test('no access token -> 401 unauthorized', async () => {
    await expectEvery(
      () => true,
      () => undefined,
      () => ({ status: 401, error: 'unauthorized' }),
    );
  });

  test('a garbage access token -> 401', async () => {
    await expectEvery(
      () => true,
      () => 'Bearer not-a-jwt',
      () => ({ status: 401 }),
    );
  });

  test('signed in without any right -> 403 forbidden', async () => {
    await expectEvery(
      () => true,
      () => plain,
      refused,
    );
  });
});

describe('routes guarded by a permission', () => {
  test('the holder of exactly that permission -> the declared success status', async () => {
    await expectEvery(isPermission, (r) => holderOf(permissionOf(r)), ok);
  });

  test('every other permission but not that one -> 403', async () => {
    await expectEvery(
      isPermission,
      async (r) =>
        (
          await makeUserWithPermissions(
            t,
            CATALOGUE.filter((p) => p !== permissionOf(r)),
          )
        ).bearer,
      refused,
    );
  });

  test('the permission through an application-scoped role only -> 403 (only global roles govern this server)', async () => {
    await expectEvery(isPermission, async (r) => (await makeUserWithPermissions(t, [permissionOf(r)], 'some-app')).bearer, refused);
  });

  test('super_admin (holds every permission) -> the declared success status', async () => {
    await expectEvery(isPermission, () => superAdmin, ok);
  });
});

describe("routes guarded by the spec's permission admin (role admin or super_admin)", () => {
  test('role admin and role super_admin -> the declared success status', async () => {
    await expectEvery(isAdmin, () => byRole.get('admin'), ok);
    await expectEvery(isAdmin, () => superAdmin, ok);
  });

  test('role manager, or every catalogue permission without an admin role -> 403', async () => {
    await expectEvery(isAdmin, () => byRole.get('manager'), refused);
    await expectEvery(isAdmin, () => everyPermissionNoAdminRole, refused);
  });
});

describe('routes guarded by roles', () => {
  test('each listed role -> the declared success status', async () => {
    for (const role of ADMIN_TIER) {
      await expectEvery(
        (r) => rolesOf(r).includes(role),
        () => byRole.get(role),
        ok,
      );
    }
  });

  test('an admin-tier role that is not listed -> 403', async () => {
    for (const role of ADMIN_TIER) {
      await expectEvery(
        (r) => rolesOf(r).length > 0 && !rolesOf(r).includes(role),
        () => byRole.get(role),
        refused,
      );
    }
  });

  test('every catalogue permission without the role -> 403', async () => {
    await expectEvery(
      (r) => rolesOf(r).length > 0,
      () => everyPermissionNoAdminRole,
      refused,
    );
  });
});

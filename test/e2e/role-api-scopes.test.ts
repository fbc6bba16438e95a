import request from 'supertest';
import { makeSignedInUser, makeUser, signIn } from '../helpers/factories';
import { answerOnDevicePage, makeApiResource, makeAppClient } from '../helpers/apps';
import { basicAuth, obtainCode } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Roles carry API permissions (docs/rbac.md "Roles that grant API scopes"): `api_scopes` on roles through the RBAC
 * API, `role_based_access` on API resources through the admin API, and the scopes a user-delegated token for such a
 * resource carries, through a real authorization-code flow (authorize, consent, token, refresh) and a device grant
 * approved on /device (token, refresh).
 */
const jose = require('jose') as typeof import('jose');

let t: TestApp;
let root: string;
let admin: string;

beforeAll(async () => {
  t = await createTestApp();
  root = (await makeSignedInUser(t, ['super_admin'])).bearer;
  admin = (await makeSignedInUser(t, ['admin'])).bearer;
});
afterAll(async () => {
  await t.close();
});

const api = () => request(t.app);
const createRole = async (body: Record<string, unknown>) => {
  const res = await api().post('/api/rbac/roles').set('Authorization', root).send(body);
  if (res.status !== 201) throw new Error(`role create answered ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.role as { id: string; api_scopes: Array<{ resource: string; scope: string }> };
};
const putRole = (id: string, body: Record<string, unknown>) => api().put(`/api/rbac/roles/${id}`).set('Authorization', root).send(body);

describe('api_scopes on roles', () => {
  test('PUT sets them, GET and the list answer them, an empty list clears them; audited', async () => {
    const orders = await makeApiResource(t, { scopes: ['orders:read', 'orders:write'] });
    const invoices = await makeApiResource(t, { scopes: ['invoices:read'] });
    const role = await createRole({ name: `clerk-${Date.now()}` });
    expect(role.api_scopes).toEqual([]);
    const put = await putRole(role.id, {
      api_scopes: [
        { resource: orders.identifier, scope: 'orders:write' },
        { resource: invoices.identifier, scope: 'invoices:read' },
        { resource: orders.identifier, scope: 'orders:read' },
        { resource: orders.identifier, scope: 'orders:read' },
      ],
    });
    expect(put.status).toBe(200);
    const expected = [
      { resource: invoices.identifier, scope: 'invoices:read' },
      { resource: orders.identifier, scope: 'orders:read' },
      { resource: orders.identifier, scope: 'orders:write' },
    ].sort((a, b) => a.resource.localeCompare(b.resource) || a.scope.localeCompare(b.scope));
    expect(put.body.role.api_scopes).toEqual(expected);
    const got = await api().get(`/api/rbac/roles/${role.id}`).set('Authorization', admin);
    expect(got.status).toBe(200);
    expect(got.body.role.api_scopes).toEqual(expected);
    const list = await api().get('/api/rbac/roles').set('Authorization', admin);
    expect(list.body.roles.find((r: { id: string }) => r.id === role.id).api_scopes).toEqual(expected);
    const event = await t.db('audit_events').where({ type: 'role.changed', subject_id: role.id }).orderBy('id', 'desc').first();
    expect(event.detail.fields).toEqual(['api_scopes']);
    expect(event.detail.api_scopes).toContain(`${orders.identifier} orders:write`);

    // A scope the resource stops defining is no longer granted (nor shown); deleting the resource drops its rows.
    await api()
      .put(`/api/admin/api-resources/${orders.id}`)
      .set('Authorization', root)
      .send({ scopes: ['orders:read'] });
    const narrowed = (await api().get(`/api/rbac/roles/${role.id}`).set('Authorization', admin)).body.role.api_scopes;
    expect(narrowed).not.toContainEqual({ resource: orders.identifier, scope: 'orders:write' });
    await api().delete(`/api/admin/api-resources/${orders.id}`).set('Authorization', root);
    expect((await api().get(`/api/rbac/roles/${role.id}`).set('Authorization', admin)).body.role.api_scopes).toEqual([
      { resource: invoices.identifier, scope: 'invoices:read' },
    ]);
    expect((await putRole(role.id, { api_scopes: [] })).body.role.api_scopes).toEqual([]);
  });

  test('POST accepts them too', async () => {
    const resource = await makeApiResource(t, { scopes: ['stock:read'] });
    const role = await createRole({ name: `stock-${Date.now()}`, api_scopes: [{ resource: resource.identifier, scope: 'stock:read' }] });
    expect(role.api_scopes).toEqual([{ resource: resource.identifier, scope: 'stock:read' }]);
  });

  test.each([
    ['an unregistered resource', () => [{ resource: 'https://nowhere.test/', scope: 'x' }], 'api_scopes[0].resource'],
    [
      'a scope the resource does not define',
      (id: string) => [
        { resource: id, scope: 'orders:read' },
        { resource: id, scope: 'nope' },
      ],
      'api_scopes[1].scope',
    ],
    ['not an array', () => 'orders:read', 'api_scopes'],
    ['an entry without scope', (id: string) => [{ resource: id }], 'api_scopes.0.scope'],
  ])('%s -> 400 validation_error naming the entry, nothing changed', async (_name, scopes, path) => {
    const resource = await makeApiResource(t, { scopes: ['orders:read'] });
    const role = await createRole({ name: `bad-${Math.random().toString(36).slice(2, 8)}` });
    const res = await putRole(role.id, { api_scopes: scopes(resource.identifier) });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
    expect(res.body.details.map((d: { path: string }) => d.path)).toContain(path);
    expect((await api().get(`/api/rbac/roles/${role.id}`).set('Authorization', admin)).body.role.api_scopes).toEqual([]);
  });

  test('only super_admin changes them (admin: 403)', async () => {
    const role = await createRole({ name: `guarded-${Date.now()}` });
    const res = await api().put(`/api/rbac/roles/${role.id}`).set('Authorization', admin).send({ api_scopes: [] });
    expect(res.status).toBe(403);
  });
});

describe('role_based_access on API resources', () => {
  test('create, read, change; false by default; a non-boolean is a 400 naming it', async () => {
    const created = await api()
      .post('/api/admin/api-resources')
      .set('Authorization', admin)
      .send({ identifier: `https://rba-${Date.now()}.test/`, name: 'RBA', scopes: ['a:read'] });
    expect(created.status).toBe(201);
    expect(created.body.resource.role_based_access).toBe(false);
    const id = created.body.resource.id;
    const put = await api().put(`/api/admin/api-resources/${id}`).set('Authorization', admin).send({ role_based_access: true });
    expect(put.body.resource.role_based_access).toBe(true);
    expect((await api().get(`/api/admin/api-resources/${id}`).set('Authorization', admin)).body.resource.role_based_access).toBe(true);
    const bad = await api().put(`/api/admin/api-resources/${id}`).set('Authorization', admin).send({ role_based_access: 'yes' });
    expect(bad.status).toBe(400);
    expect(bad.body.details.map((d: { path: string }) => d.path)).toContain('role_based_access');
  });
});

describe('a user-delegated token for a role-based resource', () => {
  const jwks = async () => jose.createLocalJWKSet((await api().get('/api/oauth/jwks')).body);

  async function setup(options: { roleBased: boolean }) {
    const resource = await makeApiResource(t, { scopes: ['orders:read', 'orders:write'], roleBasedAccess: options.roleBased });
    const client = await makeAppClient(t, { allowedResources: [resource.identifier], grantTypes: ['authorization_code', 'refresh_token'] });
    const user = await makeUser(t);
    const auth = basicAuth(client.clientId, client.clientSecret!);
    const flow = async () => {
      const { agent } = await signIn(t, user);
      const { code, verifier, redirectUri } = await obtainCode(
        agent,
        { ...client, clientSecret: client.clientSecret! },
        { scope: 'openid profile orders:read orders:write', resource: resource.identifier },
      );
      const res = await api().post('/api/oauth/token').set('Authorization', auth).type('form').send({
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        redirect_uri: redirectUri,
        resource: resource.identifier,
      });
      expect(res.status).toBe(200);
      return res.body as { access_token: string; refresh_token: string; scope: string };
    };
    const refresh = async (refreshToken: string) => {
      const res = await api()
        .post('/api/oauth/token')
        .set('Authorization', auth)
        .type('form')
        .send({ grant_type: 'refresh_token', refresh_token: refreshToken, resource: resource.identifier });
      expect(res.status).toBe(200);
      return res.body as { access_token: string; refresh_token: string; scope: string };
    };
    const claims = async (accessToken: string) =>
      (await jose.jwtVerify(accessToken, await jwks(), { issuer: t.config.oidcIssuer, audience: resource.identifier })).payload;
    return { resource, client, user, flow, refresh, claims };
  }

  test('only the requested scopes the roles grant; a role given later counts at the next refresh, one taken away stops counting', async () => {
    const s = await setup({ roleBased: true });
    // No role grants anything: the API's scopes are dropped silently, the others stay.
    const none = await s.flow();
    expect(none.scope).toBe('openid profile');
    expect((await s.claims(none.access_token)).scope).toBe('openid profile');

    const reader = await createRole({
      name: `reader-${Date.now()}`,
      api_scopes: [{ resource: s.resource.identifier, scope: 'orders:read' }],
    });
    await api().post(`/api/users/${s.user.id}/roles`).set('Authorization', root).send({ role_id: reader.id }).expect(201);
    const read = await s.flow();
    expect(read.scope).toBe('openid profile orders:read');
    expect((await s.claims(read.access_token)).scope).toBe('openid profile orders:read');

    // A global role granting write, given after the token was issued: the refresh carries it.
    const writer = await createRole({
      name: `writer-${Date.now()}`,
      api_scopes: [{ resource: s.resource.identifier, scope: 'orders:write' }],
    });
    await api().post(`/api/users/${s.user.id}/roles`).set('Authorization', root).send({ role_id: writer.id }).expect(201);
    const both = await s.refresh(read.refresh_token);
    expect(both.scope).toBe('openid profile orders:read orders:write');
    expect((await s.claims(both.access_token)).scope).toBe('openid profile orders:read orders:write');

    // Deactivating the writer role: the next refresh no longer carries write.
    await api().delete(`/api/rbac/roles/${writer.id}`).set('Authorization', root).expect(200);
    const after = await s.refresh(both.refresh_token);
    expect((await s.claims(after.access_token)).scope).toBe('openid profile orders:read');
  });

  test("an application-scoped role counts for its own application's tokens only", async () => {
    const s = await setup({ roleBased: true });
    const other = await makeAppClient(t);
    const elsewhere = await createRole({
      name: `app-reader-${Date.now()}`,
      application: other.clientId,
      api_scopes: [{ resource: s.resource.identifier, scope: 'orders:read' }],
    });
    await api().post(`/api/users/${s.user.id}/roles`).set('Authorization', root).send({ role_id: elsewhere.id }).expect(201);
    expect((await s.flow()).scope).toBe('openid profile');
    const here = await createRole({
      name: `app-reader-${Date.now()}`,
      application: s.client.clientId,
      api_scopes: [{ resource: s.resource.identifier, scope: 'orders:read' }],
    });
    await api().post(`/api/users/${s.user.id}/roles`).set('Authorization', root).send({ role_id: here.id }).expect(201);
    expect((await s.flow()).scope).toBe('openid profile orders:read');
  });

  test('the device grant: its tokens carry only the scopes the roles grant, also at its refresh', async () => {
    const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
    const resource = await makeApiResource(t, { scopes: ['orders:read', 'orders:write'], roleBasedAccess: true });
    const tv = await makeAppClient(t, {
      type: 'public',
      grantTypes: [DEVICE_GRANT, 'refresh_token'],
      redirectUris: [],
      allowedResources: [resource.identifier],
      name: 'Warehouse scanner',
    });
    const user = await makeUser(t);
    const reader = await createRole({
      name: `device-reader-${Date.now()}`,
      api_scopes: [{ resource: resource.identifier, scope: 'orders:read' }],
    });
    await api().post(`/api/users/${user.id}/roles`).set('Authorization', root).send({ role_id: reader.id }).expect(201);

    const started = await api()
      .post('/api/oauth/device_authorization')
      .type('form')
      .send({ client_id: tv.clientId, scope: 'openid profile orders:read orders:write', resource: resource.identifier });
    expect(started.status).toBe(200);
    const { agent } = await signIn(t, user);
    expect((await answerOnDevicePage(agent, started.body.user_code, 'approve')).status).toBe(200);
    const tokens = await api()
      .post('/api/oauth/token')
      .type('form')
      .send({ grant_type: DEVICE_GRANT, device_code: started.body.device_code, client_id: tv.clientId });
    expect(tokens.status).toBe(200);
    // orders:write was requested and consented to, but no role grants it: dropped, as an unknown scope is.
    expect(tokens.body.scope).toBe('openid profile orders:read');
    const claims = async (accessToken: string) =>
      (await jose.jwtVerify(accessToken, await jwks(), { issuer: t.config.oidcIssuer, audience: resource.identifier })).payload;
    expect((await claims(tokens.body.access_token)).scope).toBe('openid profile orders:read');

    // The role taken away: the device's refresh keeps none of the API's scopes.
    await api().delete(`/api/users/${user.id}/roles/${reader.id}`).set('Authorization', root).expect(204);
    const refreshed = await api().post('/api/oauth/token').type('form').send({
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token,
      client_id: tv.clientId,
      resource: resource.identifier,
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.scope).toBe('openid profile');
    expect((await claims(refreshed.body.access_token)).scope).toBe('openid profile');
  });

  test('without role_based_access nothing changes: every requested scope the client may ask for', async () => {
    const s = await setup({ roleBased: false });
    const body = await s.flow();
    expect(body.scope).toBe('openid profile orders:read orders:write');
    expect((await s.claims(body.access_token)).scope).toBe('openid profile orders:read orders:write');
  });

  test('a machine-to-machine client keeps its allowed scopes on a role-based resource', async () => {
    const resource = await makeApiResource(t, { scopes: ['orders:read', 'orders:write'], roleBasedAccess: true });
    const m2m = await makeAppClient(t, {
      grantTypes: ['client_credentials'],
      redirectUris: [],
      scopes: [],
      allowedResources: [resource.identifier],
    });
    const res = await api()
      .post('/api/oauth/token')
      .set('Authorization', basicAuth(m2m.clientId, m2m.clientSecret!))
      .type('form')
      .send({ grant_type: 'client_credentials', resource: resource.identifier, scope: 'orders:read orders:write' });
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('orders:read orders:write');
  });
});

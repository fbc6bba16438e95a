import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { makeSignedInUser, makeUser } from '../helpers/factories';
import { csrfFrom } from '../helpers/oauth';
import { makeRole } from '../helpers/rbac';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * The console's SCIM pages (docs/scim.md), built from /api/admin/scim-connections and /api/admin/scim-groups: a
 * connection created with its token shown once (and working at /scim/v2), rotated (the old token stops), revoked; a
 * pushed group mapped to roles chosen from a list, checked through the REST API and the live permission lookup;
 * refusals in the page's language with the error summary; a manager refused by both faces alike.
 */
let t: TestApp;
let admin: { agent: TestAgent; csrf: string; bearer: string };

beforeAll(async () => {
  t = await createTestApp();
  const s = await makeSignedInUser(t, ['super_admin']);
  admin = { agent: s.agent, bearer: s.bearer, csrf: await csrfFrom(s.agent, '/admin/users') };
});
afterAll(async () => {
  await t?.close();
});

const post = (agent: TestAgent, path: string, csrf: string, form: Record<string, string | string[]> = {}) =>
  agent
    .post(path)
    .type('form')
    .send({ csrf, ...form });

async function flashAfter(agent: TestAgent, res: request.Response): Promise<string> {
  expect(res.status).toBe(303);
  const page = await agent.get(res.headers.location as string);
  const match = /<p class="(ok|error)" role="(?:status|alert)">([^<]*)<\/p>/.exec(page.text);
  return match ? `${match[1]}: ${match[2]}` : '(no flash)';
}

const tokenOf = (html: string) => /id="scim-token">([^<]+)</.exec(html)![1]!;
const scimGet = (token: string, path: string) => request(t.app).get(`/scim/v2${path}`).set('Authorization', `Bearer ${token}`);
const api = (path: string, bearer = admin.bearer) => request(t.app).get(path).set('Authorization', bearer);

async function auditTypes(subjectId: string): Promise<string[]> {
  await t.ctx.events.idle?.();
  return (await t.db('audit_events').where({ subject_id: subjectId }).orderBy('id')).map((e: { type: string }) => e.type);
}

test('connections: create (token shown once, works), list with last use, rotate (old token stops), revoke', async () => {
  const empty = await admin.agent.get('/admin/scim');
  expect(empty.status).toBe(200);
  expect(empty.headers['cache-control']).toContain('no-store');
  expect(empty.text).toContain(`${t.config.baseUrl}/scim/v2`);
  expect(empty.text).toContain('No SCIM connections yet');
  expect((await admin.agent.get('/admin')).text).toContain('href="/admin/scim"');

  const created = await post(admin.agent, '/admin/scim', admin.csrf, { name: 'Entra ID', description: 'Contoso tenant' });
  expect(created.status).toBe(201);
  expect(created.headers['cache-control']).toContain('no-store');
  const token = tokenOf(created.text);
  expect(token).toMatch(/^scim_/);
  const [connection] = (await api('/api/admin/scim-connections')).body.connections as Array<{ id: string; name: string }>;
  expect(connection).toMatchObject({ name: 'Entra ID', description: 'Contoso tenant', last_used_at: null });
  expect((await scimGet(token, '/Users?count=1')).status).toBe(200);

  const list = await admin.agent.get('/admin/scim');
  expect(list.text).toContain(`href="/admin/scim/${connection!.id}"`);
  expect(list.text).not.toContain(token);
  expect(list.text).not.toContain('Never');
  const detail = await admin.agent.get(`/admin/scim/${connection!.id}`);
  expect(detail.text).toContain('SCIM connection Entra ID');
  expect(detail.text).not.toContain(token);

  // Rotate: asked first, then a new token; the old one stops at once.
  const ask = await post(admin.agent, `/admin/scim/${connection!.id}/rotate`, admin.csrf);
  expect(ask.status).toBe(200);
  expect(ask.text).toContain('Rotate the token of Entra ID?');
  expect((await scimGet(token, '/Users?count=1')).status).toBe(200);
  const rotated = await post(admin.agent, `/admin/scim/${connection!.id}/rotate`, admin.csrf, { confirm: 'yes' });
  expect(rotated.status).toBe(200);
  expect(rotated.headers['cache-control']).toContain('no-store');
  const next = tokenOf(rotated.text);
  expect(next).not.toBe(token);
  expect((await scimGet(token, '/Users?count=1')).status).toBe(401);
  expect((await scimGet(next, '/Users?count=1')).status).toBe(200);

  // Revoke: asked first, then gone from the API; the token stops.
  const revoked = await post(admin.agent, `/admin/scim/${connection!.id}/delete`, admin.csrf, { confirm: 'yes' });
  expect(await flashAfter(admin.agent, revoked)).toBe('ok: SCIM connection revoked.');
  expect((await api(`/api/admin/scim-connections/${connection!.id}`)).status).toBe(404);
  expect((await scimGet(next, '/Users?count=1')).status).toBe(401);
  // Revoked in another tab: the stale post says so on the list, never a 5xx.
  const stale = await post(admin.agent, `/admin/scim/${connection!.id}/rotate`, admin.csrf, { confirm: 'yes' });
  expect(await flashAfter(admin.agent, stale)).toBe('error: SCIM connection not found');
  expect(await auditTypes(connection!.id)).toEqual(['scim.connection.created', 'scim.connection.token_rotated', 'scim.connection.deleted']);
});

test('a refused connection form: field errors in German with the error summary, values kept', async () => {
  const bad = await post(admin.agent.set('Accept-Language', 'de'), '/admin/scim', admin.csrf, { name: '  ', description: 'Lohn' });
  admin.agent.set('Accept-Language', 'en');
  expect(bad.status).toBe(400);
  expect(bad.text).toContain('<html lang="de">');
  expect(bad.text).toMatch(/<title>Fehler: Verbindung anlegen · /);
  expect(bad.text).toContain('id="error-summary"');
  expect(bad.text).toContain('<a href="#f-name">Geben Sie einen Namen an.');
  expect(bad.text).toContain('value="Lohn"');
  const en = await post(admin.agent, '/admin/scim', admin.csrf, { name: 'x'.repeat(101) });
  expect(en.status).toBe(400);
  expect(en.text).toContain('name is too long (at most 100 characters)');
  expect((await api('/api/admin/scim-connections')).body.connections).toHaveLength(0);
});

test('groups: a pushed group mapped to roles chosen from a list grants them live; super_admin is not offered', async () => {
  const created = await request(t.app)
    .post('/api/admin/scim-connections')
    .set('Authorization', admin.bearer)
    .send({ name: 'Okta' })
    .expect(201);
  const token = created.body.token as string;
  const member = await makeUser(t);
  const group = await request(t.app)
    .post('/scim/v2/Groups')
    .set('Authorization', `Bearer ${token}`)
    .set('Content-Type', 'application/scim+json')
    .send(
      JSON.stringify({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'Sales', members: [{ value: member.id }] }),
    )
    .expect(201);
  const groupId = group.body.id as string;
  const role = await makeRole(t, { name: `sales-readers-${Date.now()}`, permissions: ['users:read'] });

  const list = await admin.agent.get('/admin/scim-groups');
  expect(list.status).toBe(200);
  expect(list.text).toContain('Sales');
  expect(list.text).toContain('None (grants nothing)');
  const page = await admin.agent.get(`/admin/scim-groups/${groupId}`);
  expect(page.status).toBe(200);
  expect(page.text).toContain(`value="${role.id}"`);
  const superAdminRole = await t.db('roles').where({ name: 'super_admin' }).whereNull('application').first();
  expect(page.text).not.toContain(`value="${superAdminRole.id}"`);

  const saved = await post(admin.agent, `/admin/scim-groups/${groupId}`, admin.csrf, { role_ids: [role.id] });
  expect(await flashAfter(admin.agent, saved)).toBe('ok: Roles of the group saved.');
  expect((await api(`/api/admin/scim-groups/${groupId}/roles`)).body.group.role_ids).toEqual([role.id]);
  const access = await api(`/api/users/${member.id}`);
  expect(access.body.user.roles.map((r: { name: string }) => r.name)).toContain(role.name);
  expect((await admin.agent.get('/admin/scim-groups')).text).toContain(role.name);

  // A forged post naming super_admin: refused beside the field, in the page's language, nothing changed.
  const forged = await post(admin.agent.set('Accept-Language', 'de'), `/admin/scim-groups/${groupId}`, admin.csrf, {
    role_ids: [superAdminRole.id],
  });
  admin.agent.set('Accept-Language', 'en');
  expect(forged.status).toBe(400);
  expect(forged.text).toContain('Eine SCIM-Gruppe wird nie super_admin zugeordnet.');
  expect(forged.text).toContain('id="error-summary"');
  expect((await api(`/api/admin/scim-groups/${groupId}/roles`)).body.group.role_ids).toEqual([role.id]);

  // Unchecking every role ends the grant from the next request on.
  await post(admin.agent, `/admin/scim-groups/${groupId}`, admin.csrf, {});
  expect((await api(`/api/users/${member.id}`)).body.user.roles.map((r: { name: string }) => r.name)).not.toContain(role.name);
  expect(await auditTypes(groupId)).toEqual(['scim.group.created', 'scim.group.roles_changed', 'scim.group.roles_changed']);
});

test('a manager is refused every SCIM page and action, as by the API', async () => {
  const s = await makeSignedInUser(t, ['manager']);
  const csrf = await csrfFrom(s.agent, '/admin/users');
  const conn = await request(t.app).post('/api/admin/scim-connections').set('Authorization', admin.bearer).send({ name: 'M' }).expect(201);
  const id = conn.body.connection.id as string;
  for (const [method, path, twin] of [
    ['get', '/admin/scim', '/api/admin/scim-connections'],
    ['get', '/admin/scim/new', ''],
    ['get', `/admin/scim/${id}`, `/api/admin/scim-connections/${id}`],
    ['get', '/admin/scim-groups', '/api/admin/scim-groups'],
    ['post', '/admin/scim', ''],
    ['post', `/admin/scim/${id}/rotate`, ''],
    ['post', `/admin/scim/${id}/delete`, ''],
  ] as const) {
    const res = method === 'get' ? await s.agent.get(path) : await post(s.agent, path, csrf, { confirm: 'yes', name: 'x' });
    expect([path, res.status]).toEqual([path, 403]);
    expect(res.text).toContain('Not allowed');
    if (twin) expect((await api(twin, s.bearer)).status).toBe(403);
  }
  expect((await api(`/api/admin/scim-connections/${id}`)).status).toBe(200);
  expect((await s.agent.get('/admin/users')).text).not.toContain('href="/admin/scim"');
});

test('a manager given users:manage_roles (no admin role) maps a group from the role choices, as through the API', async () => {
  const manager = await makeSignedInUser(t, ['manager']);
  const grants = await makeRole(t, { permissions: ['system:manage_users', 'users:manage_roles'] });
  await t.db('user_roles').insert({ user_id: manager.user.id, role_id: grants.id });
  const csrf = await csrfFrom(manager.agent, '/admin/users');
  const created = await request(t.app)
    .post('/api/admin/scim-connections')
    .set('Authorization', admin.bearer)
    .send({ name: 'Entra' })
    .expect(201);
  const group = await request(t.app)
    .post('/scim/v2/Groups')
    .set('Authorization', `Bearer ${created.body.token as string}`)
    .set('Content-Type', 'application/scim+json')
    .send(JSON.stringify({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'Support' }))
    .expect(201);
  const groupId = group.body.id as string;
  const role = await makeRole(t, { name: `support-${Date.now()}` });
  const superAdminRole = await t.db('roles').where({ name: 'super_admin' }).whereNull('application').first();

  // The choices come from GET /api/users/roles/assignable, which this caller may read (GET /api/rbac/roles it may not).
  expect((await api('/api/rbac/roles', manager.bearer)).status).toBe(403);
  const choices = await api('/api/users/roles/assignable', manager.bearer);
  expect(choices.status).toBe(200);
  expect(choices.body.roles.map((r: { id: string }) => r.id)).toContain(role.id);

  const list = await manager.agent.get('/admin/scim-groups');
  expect(list.status).toBe(200);
  expect(list.text).toContain('Support');
  const page = await manager.agent.get(`/admin/scim-groups/${groupId}`);
  expect(page.status).toBe(200);
  expect(page.text).toContain(`value="${role.id}"`);
  expect(page.text).not.toContain(`value="${superAdminRole.id}"`);
  const saved = await post(manager.agent, `/admin/scim-groups/${groupId}`, csrf, { role_ids: [role.id] });
  expect(await flashAfter(manager.agent, saved)).toBe('ok: Roles of the group saved.');
  expect((await api(`/api/admin/scim-groups/${groupId}/roles`)).body.group.role_ids).toEqual([role.id]);

  // A plain manager (users:read, users:write) is refused the choices by both faces.
  const plain = await makeSignedInUser(t, ['manager']);
  expect((await api('/api/users/roles/assignable', plain.bearer)).status).toBe(403);
  expect((await plain.agent.get(`/admin/scim-groups/${groupId}`)).status).toBe(403);
});

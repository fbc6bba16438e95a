import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { en } from '../../src/i18n/en';
import { de } from '../../src/i18n/de';
import { makeApiResource } from '../helpers/apps';
import { makeClient, makeSignedInUser, makeUser } from '../helpers/factories';
import { csrfFrom } from '../helpers/oauth';
import { CATALOGUE, makeRole } from '../helpers/rbac';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * The role page of the console (issue 32, item 4; docs/rbac.md): the application from the registered clients, API
 * scopes as checkboxes from the registered resources, a role stored earlier with a free-text application shown and
 * fixable, permission descriptions that say what they guard (stored and translated), "Role to assign" empty at first,
 * and the API resource's role-based access switch.
 */
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

async function superAdmin() {
  const s = await makeSignedInUser(t, ['super_admin']);
  return { ...s, csrf: await csrfFrom(s.agent, '/admin/roles/new') };
}

const post = (agent: TestAgent, path: string, csrf: string, fields: Record<string, string | string[]>) =>
  agent
    .post(path)
    .type('form')
    .send({ csrf, ...fields });

async function flashAfter(agent: TestAgent, res: request.Response): Promise<string> {
  expect(res.status).toBe(303);
  const page = await agent.get(res.headers.location as string);
  const match = /<p class="(ok|error)" role="(?:status|alert)">([^<]*)<\/p>/.exec(page.text);
  return match ? `${match[1]}: ${match[2]}` : '(no flash)';
}

const decode = (html: string) =>
  html
    .replace(/&amp;/g, '&')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&quot;/g, '"');

test('a super_admin creates an application role from the list of applications, granting API scopes chosen as checkboxes', async () => {
  const { agent, csrf } = await superAdmin();
  const client = await makeClient(t, { name: 'Billing Portal' });
  const api = await makeApiResource(t, { name: 'Invoices', scopes: ['invoices:read', 'invoices:write'], roleBasedAccess: true });
  const form = await agent.get('/admin/roles/new');
  expect(form.status).toBe(200);
  // The application is chosen from the clients (a select, "None: a global role" first), not typed.
  expect(form.text).toMatch(/<select id="f-application" name="application"/);
  expect(form.text).toContain(`<option value="${client.clientId}">Billing Portal (${client.clientId})</option>`);
  expect(form.text).toMatch(/<option value(="")?( selected)?>None: a global role<\/option>/);
  expect(decode(form.text)).toContain(`Invoices (${api.identifier}) · role-based access on`);
  expect(form.text).toContain(`value="${api.identifier} invoices:write"`);

  const name = `billing-${Date.now()}`;
  const created = await post(agent, '/admin/roles', csrf, {
    name,
    description: 'Reads invoices',
    application: client.clientId,
    permissions: [],
    api_scopes: [`${api.identifier} invoices:read`],
  });
  expect(await flashAfter(agent, created)).toBe(`ok: Role ${name} created.`);
  const role = await t.db('roles').where({ name }).first();
  expect(role.application).toBe(client.clientId);
  expect(await t.db('role_api_scopes').where({ role_id: role.id }).select('scope')).toEqual([{ scope: 'invoices:read' }]);

  // Edited: the checkboxes replace the list (both scopes now), shown checked on the page.
  const edit = await post(agent, `/admin/roles/${role.id}`, csrf, {
    name,
    description: 'Reads and writes invoices',
    application: client.clientId,
    permissions: [],
    api_scopes: [`${api.identifier} invoices:read`, `${api.identifier} invoices:write`],
  });
  expect(await flashAfter(agent, edit)).toBe('ok: Role saved.');
  const page = await agent.get(`/admin/roles/${role.id}`);
  expect(page.text).toMatch(new RegExp(`value="${api.identifier} invoices:write" checked`));
  const { body } = await agent
    .get(`/api/rbac/roles/${role.id}`)
    .set('authorization', `Bearer ${(await makeSignedInUser(t, ['admin'])).accessToken}`);
  expect(body.role.api_scopes).toEqual([
    { resource: api.identifier, scope: 'invoices:read' },
    { resource: api.identifier, scope: 'invoices:write' },
  ]);
});

test('a role stored earlier with a free-text application is shown as such and re-pointed at a registered application', async () => {
  const { agent, csrf } = await superAdmin();
  const client = await makeClient(t, { name: 'CRM' });
  const stray = await makeRole(t, { name: `crm-agent-${Date.now()}`, application: 'crm' });
  const page = await agent.get(`/admin/roles/${stray.id}`);
  expect(page.text).toContain('<option value="crm" selected>crm: not a registered application</option>');
  expect(decode(page.text)).toContain('This role names the application "crm", which is not the client_id of any registered application');

  const fixed = await post(agent, `/admin/roles/${stray.id}`, csrf, {
    name: stray.name,
    description: '',
    application: client.clientId,
    permissions: [],
  });
  expect(await flashAfter(agent, fixed)).toBe('ok: Role saved.');
  expect((await t.db('roles').where({ id: stray.id }).first()).application).toBe(client.clientId);
  await t.ctx.events.idle?.();
  const event = await t.db('audit_events').where({ subject_id: stray.id, type: 'role.changed' }).orderBy('id', 'desc').first();
  expect(event.detail).toMatchObject({ application: client.clientId, fields: expect.arrayContaining(['application']) });
  expect((await agent.get(`/admin/roles/${stray.id}`)).text).not.toContain('not a registered application');
});

test('PUT /api/rbac/roles/:roleId: an application role moves to another application; a global role stays global', async () => {
  const { accessToken } = await makeSignedInUser(t, ['super_admin']);
  const scoped = await makeRole(t, { application: 'old-name' });
  const global = await makeRole(t);
  const put = (id: string, body: object) =>
    request(t.app).put(`/api/rbac/roles/${id}`).set('authorization', `Bearer ${accessToken}`).send(body);
  const moved = await put(scoped.id, { application: 'new-app' });
  expect(moved.status).toBe(200);
  expect(moved.body.role.application).toBe('new-app');
  expect((await put(scoped.id, { application: null })).status).toBe(409);
  const refused = await put(global.id, { application: 'crm' });
  expect(refused.status).toBe(409);
  expect(refused.body.error).toBe('conflict');
  expect((await t.db('roles').where({ id: global.id }).first()).application).toBeNull();
  expect((await put(scoped.id, { application: 'has space' })).body.error).toBe('validation_error');
});

test('permission descriptions say what each permission guards: stored by the migration, shown translated', async () => {
  const stored = Object.fromEntries(
    (await t.db('permissions').select('name', 'description')).map((p: { name: string; description: string }) => [p.name, p.description]),
  );
  // Every catalogue permission has a sentence in both catalogues, and the stored one is the English sentence.
  for (const name of CATALOGUE) {
    expect([name, stored[name]]).toEqual([name, en.console.roles.permissionDescriptions[name]]);
    expect(de.console.roles.permissionDescriptions[name]).toBeTruthy();
  }
  expect(stored['system:manage_users']).toMatch(/audit log; manage webhooks and SCIM connections; read and change settings/);

  const { agent } = await superAdmin();
  const german = decode((await agent.get('/admin/roles/new').set('accept-language', 'de')).text);
  expect(german).toContain(`system:manage_users — ${de.console.roles.permissionDescriptions['system:manage_users']}`);
  expect(german).not.toContain(en.console.roles.permissionDescriptions['users:read']);
  // The built-in roles' seeded descriptions are shown in German while unchanged.
  const list = decode((await agent.get('/admin/roles').set('accept-language', 'de')).text);
  expect(list).toContain('Hat jede Berechtigung');
  expect(list).not.toContain('Holds every permission');
});

test('"Role to assign" starts empty; assigning nothing says so', async () => {
  const { agent, csrf } = await superAdmin();
  const target = await makeUser(t);
  const page = await agent.get(`/admin/users/${target.id}`);
  expect(page.text).toMatch(/<select id="f-role_id" name="role_id" required><option value(?:="")? selected>Choose a role…<\/option>/);
  const res = await post(agent, `/admin/users/${target.id}/roles`, csrf, { role_id: '' });
  expect(await flashAfter(agent, res)).toBe('error: Choose a role to assign.');
  expect(await t.db('user_roles').where({ user_id: target.id })).toEqual([]);
});

test('the API resource page switches role-based access', async () => {
  const { agent, csrf } = await superAdmin();
  const api = await makeApiResource(t, { name: 'Reports' });
  const page = await agent.get(`/admin/api-resources/${api.id}`);
  expect(page.text).toContain('Role-based access');
  const saved = await post(agent, `/admin/api-resources/${api.id}`, csrf, {
    identifier: api.identifier,
    name: 'Reports',
    scopes: 'invoices:read invoices:write',
    access_token_ttl_s: '3600',
    role_based_access: 'true',
  });
  expect(await flashAfter(agent, saved)).toBe('ok: API resource saved.');
  expect((await t.db('api_resources').where({ id: api.id }).first()).role_based_access).toBe(true);
  expect((await agent.get(`/admin/api-resources/${api.id}`)).text).toMatch(
    /id="f-role_based_access" name="role_based_access" value="true" checked/,
  );
});

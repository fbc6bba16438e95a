import request from 'supertest';
import { SECURITY_EVENT_TYPES } from '../../src/services/events';
import { makeClient, makeSignedInUser, makeUser } from '../helpers/factories';
import { makeUserWithPermissions } from '../helpers/rbac';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * The audit log by name (issue 32, item 5; docs/operations.md "Audit trail", docs/console.md): GET
 * /api/admin/audit-events/types answers only the types ever stored, grouped; events name their application; the
 * console shows people and applications by name, details as labelled fields (German too) and the grouped filter.
 */
let t: TestApp;
let root: Awaited<ReturnType<typeof makeSignedInUser>>;

beforeAll(async () => {
  t = await createTestApp();
  root = await makeSignedInUser(t, ['super_admin']);
});
afterAll(async () => {
  await t.close();
});

const decode = (html: string) =>
  html
    .replace(/&amp;/g, '&')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&quot;/g, '"');

test('GET /api/admin/audit-events/types: the types ever stored, sorted and grouped by prefix; guarded', async () => {
  const person = await makeUser(t);
  await t.ctx.events.record(t.db, { type: 'webhook.redelivered', actorId: root.user.id, detail: { delivery_id: 'd1' } });
  await t.ctx.events.record(t.db, { type: 'user.deactivated', actorId: root.user.id, subjectId: person.id });
  const res = await request(t.app).get('/api/admin/audit-events/types').set('Authorization', root.bearer);
  expect(res.status).toBe(200);
  const stored = (await t.db('audit_events').distinct('type').orderBy('type')).map((r: { type: string }) => r.type);
  expect(res.body.types).toEqual(stored);
  expect(res.body.types).toEqual(expect.arrayContaining(['webhook.redelivered', 'user.deactivated']));
  expect(res.body.types.length).toBeLessThan(SECURITY_EVENT_TYPES.length);
  expect(res.body.types).not.toContain('saml.slo');
  const groups = res.body.groups as Array<{ group: string; types: string[] }>;
  expect(groups.map((g) => g.group)).toEqual([...new Set(stored.map((s) => s.split('.')[0]))]);
  expect(groups.find((g) => g.group === 'webhook')?.types).toEqual(['webhook.redelivered']);
  expect(groups.flatMap((g) => g.types)).toEqual(stored);

  expect((await request(t.app).get('/api/admin/audit-events/types')).status).toBe(401);
  const reader = await makeUserWithPermissions(t, ['users:read']);
  expect((await request(t.app).get('/api/admin/audit-events/types').set('Authorization', `Bearer ${reader.accessToken}`)).status).toBe(403);
  const spec = await request(t.app).get('/api/openapi.json');
  expect(spec.body.paths['/api/admin/audit-events/types'].get).toBeDefined();
});

test('events name their application: its name, or null once the client is gone', async () => {
  const client = await makeClient(t, { name: 'Billing Portal' });
  await t.ctx.events.record(t.db, { type: 'oauth.consent.granted', actorId: root.user.id, clientId: client.clientId });
  await t.ctx.events.record(t.db, { type: 'oauth.client.deleted', actorId: root.user.id, clientId: 'client_gone' });
  const res = await request(t.app)
    .get('/api/admin/audit-events')
    .query({ type: 'oauth.consent.granted,oauth.client.deleted' })
    .set('Authorization', root.bearer);
  expect(res.status).toBe(200);
  const byType = Object.fromEntries((res.body.events as Array<{ type: string; client: unknown }>).map((e) => [e.type, e.client]));
  expect(byType['oauth.consent.granted']).toEqual({ client_id: client.clientId, name: 'Billing Portal' });
  expect(byType['oauth.client.deleted']).toEqual({ client_id: 'client_gone', name: null });
});

test('the console shows people and applications by name, details as labelled fields, the filter grouped (en, de)', async () => {
  const admin = await makeUser(t, { roles: ['super_admin'], firstName: 'Ada', lastName: 'Admin' });
  const person = await makeUser(t, { firstName: 'Mia', lastName: 'Member' });
  const client = await makeClient(t, { name: 'Billing Portal' });
  await t.ctx.events.record(t.db, {
    type: 'role.assigned',
    actorId: admin.id,
    subjectId: person.id,
    clientId: client.clientId,
    detail: { role: 'manager', application: null, email_verified: true, scopes: ['openid', 'email'] },
  });
  const { agent } = await makeSignedInUser(t, ['super_admin']);
  const page = decode((await agent.get('/admin/audit').query({ type: 'role.assigned' })).text);
  // People: name, email beneath, linking to the account with the id as a tooltip; never a bare id.
  expect(page).toContain(
    `<a href="/admin/users/${admin.id}" title="ID ${admin.id}">Ada Admin<br/><span class="muted">${admin.email}</span></a>`,
  );
  expect(page).toContain(
    `<a href="/admin/users/${person.id}" title="ID ${person.id}">Mia Member<br/><span class="muted">${person.email}</span></a>`,
  );
  expect(page).toContain(`title="ID ${client.clientId}">Billing Portal</a>`);
  // Details: labelled fields, values in words; no raw JSON.
  // (jsonb keeps its own key order.)
  for (const pair of ['<dt>Role</dt><dd>manager</dd>', '<dt>Application</dt><dd>—</dd>', '<dt>Email verified</dt><dd>Yes</dd>'])
    expect(page).toContain(pair);
  expect(page).toContain('<dt>Scopes</dt><dd>openid, email</dd>');
  expect(page).not.toContain('{"role"');
  // The filter: only stored types, grouped under translated labels.
  expect(page).toMatch(/<optgroup label="Roles"><option value="role.assigned" selected>role.assigned<\/option><\/optgroup>/);
  expect(page).not.toContain('value="saml.slo"');

  const german = decode((await agent.get('/admin/audit').query({ type: 'role.assigned' }).set('accept-language', 'de')).text);
  for (const pair of ['<dt>Rolle</dt><dd>manager</dd>', '<dt>Anwendung</dt><dd>—</dd>', '<dt>E-Mail bestätigt</dt><dd>Ja</dd>'])
    expect(german).toContain(pair);
  expect(german).toMatch(/<optgroup label="Rollen">/);

  // The user's page shows the same names.
  const userPage = decode((await agent.get(`/admin/users/${person.id}`)).text);
  expect(userPage).toContain(`title="ID ${admin.id}">Ada Admin<br/>`);
  expect(userPage).toContain('<dt>Role</dt><dd>manager</dd>');
});

/** RFC 4180 rows (quoted cells may hold commas, doubled quotes and line breaks). */
function csvRows(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted && ch === '"' && text[i + 1] === '"') {
      cell += '"';
      i++;
    } else if (quoted && ch === '"') quoted = false;
    else if (quoted) cell += ch;
    else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(cell);
      cell = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += ch;
  }
  return rows;
}

test('the CSV export names people and applications as the audit log does, details as labelled fields (en, de), ids beside', async () => {
  const admin = await makeUser(t, { roles: ['super_admin'], firstName: 'Cleo', lastName: 'Csv' });
  const person = await makeUser(t, { firstName: 'Max', lastName: 'Muster' });
  const client = await makeClient(t, { name: 'Lohnbuchhaltung' });
  await t.ctx.events.record(t.db, {
    type: 'role.assigned',
    actorId: admin.id,
    subjectId: person.id,
    clientId: client.clientId,
    detail: { role: 'manager', email_verified: true, scopes: ['openid', 'email'] },
  });
  // A person deleted since keeps the email recorded with the event.
  const gone = await makeUser(t, { firstName: 'Gina', lastName: 'Gone' });
  await t.ctx.events.record(t.db, { type: 'user.deactivated', actorId: admin.id, subjectId: gone.id });
  await t.db('users').where({ id: gone.id }).delete();
  const { agent } = await makeSignedInUser(t, ['super_admin']);

  const csv = await agent.get('/admin/audit.csv').query({ actor: admin.id });
  expect(csv.status).toBe(200);
  const [header, ...rows] = csvRows(csv.text);
  const at = (row: string[], column: string) => row[header!.indexOf(column)];
  expect(header).toEqual([
    'id',
    'occurred_at',
    'type',
    'actor_name',
    'actor_email',
    'actor_id',
    'subject_name',
    'subject_email',
    'subject_id',
    'application',
    'client_id',
    'ip',
    'user_agent',
    'request_id',
    'detail',
    'detail_json',
  ]);
  expect(rows).toHaveLength(2);
  const assigned = rows.find((r) => at(r, 'type') === 'role.assigned')!;
  expect([at(assigned, 'actor_name'), at(assigned, 'actor_email'), at(assigned, 'actor_id')]).toEqual(['Cleo Csv', admin.email, admin.id]);
  expect([at(assigned, 'subject_name'), at(assigned, 'subject_email'), at(assigned, 'subject_id')]).toEqual([
    'Max Muster',
    person.email,
    person.id,
  ]);
  expect([at(assigned, 'application'), at(assigned, 'client_id')]).toEqual(['Lohnbuchhaltung', client.clientId]);
  // jsonb keeps its own key order: each labelled field is looked for on its own.
  for (const field of ['Role: manager', 'Email verified: Yes', 'Scopes: openid, email']) expect(at(assigned, 'detail')).toContain(field);
  expect(JSON.parse(at(assigned, 'detail_json')!)).toEqual({ role: 'manager', email_verified: true, scopes: ['openid', 'email'] });
  const deactivated = rows.find((r) => at(r, 'type') === 'user.deactivated')!;
  expect([at(deactivated, 'subject_name'), at(deactivated, 'subject_email')]).toEqual(['Gina Gone', gone.email]);
  expect(at(deactivated, 'detail')).toBe('');

  const german = csvRows(
    (await agent.get('/admin/audit.csv').query({ actor: admin.id, type: 'role.assigned' }).set('accept-language', 'de')).text,
  );
  const row = german[1]!;
  for (const field of ['Rolle: manager', 'E-Mail bestätigt: Ja']) expect(row[header!.indexOf('detail')]).toContain(field);
});

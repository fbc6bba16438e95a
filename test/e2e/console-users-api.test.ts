import request from 'supertest';
import { makeClient, makeSignedInUser, makeUser, signIn } from '../helpers/factories';
import { enrolTotp } from '../helpers/mfa';
import { obtainCode } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * The console's user pages are clients of the users API (issue 31): what a user's page shows is what
 * GET /api/users/:userId and its sessions, mfa, apps, activity and identities answer the same caller, and the list
 * walks the API's keyset pages. "Role to assign" is offered to whoever may assign roles (GET /api/users/roles/assignable).
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const decode = (html: string) =>
  html
    .replace(/&amp;/g, '&')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"');

test("a user's page shows the API's answers about the user", async () => {
  const target = await makeUser(t, { firstName: 'Grace', lastName: 'Hopper' });
  const own = await signIn(t, target);
  await enrolTotp(t, own.agent);
  const app = await makeClient(t, { name: 'Ledger Notes' });
  await obtainCode(own.agent, app, { scope: 'openid email' });
  const admin = await makeSignedInUser(t, ['super_admin']);

  const page = await admin.agent.get(`/admin/users/${target.id}`);
  expect(page.status).toBe(200);
  const html = decode(page.text);
  const api = (read: string) => request(t.app).get(`/api/users/${target.id}/${read}`).set('Authorization', admin.bearer);
  const [sessions, apps, mfa, activity] = await Promise.all([api('sessions'), api('apps'), api('mfa'), api('activity?limit=10')]);
  for (const s of sessions.body.sessions as Array<{ id: string }>)
    expect(html).toContain(`/admin/users/${target.id}/sessions/${s.id}/revoke`);
  expect(sessions.body.sessions.length).toBeGreaterThan(0);
  expect(apps.body.apps.map((a: { name: string }) => a.name)).toEqual(['Ledger Notes']);
  expect(html).toContain(`<a href="/admin/applications/${app.clientId}">Ledger Notes</a>`);
  expect(mfa.body.totp).toBe(true);
  expect(html).toMatch(/Authenticator app<\/dt>\s*<dd>On<\/dd>/);
  expect(html).toMatch(/Recovery codes left<\/dt>\s*<dd>10<\/dd>/);
  // The latest events, as many rows as the API's ten (and the header).
  const eventsTable = /<section class="panel" aria-labelledby="events-h">([\s\S]*?)<\/section>/.exec(html)?.[1] ?? '';
  expect(eventsTable.match(/<tr>/g)).toHaveLength(activity.body.events.length + 1);
  expect(html).toContain('<h1>Grace Hopper</h1>');
});

test('"Role to assign" is offered to whoever may assign roles, and only to them', async () => {
  const target = await makeUser(t);
  const admin = await makeSignedInUser(t, ['admin']);
  const withRoles = decode((await admin.agent.get(`/admin/users/${target.id}`)).text);
  expect(withRoles).toContain('name="role_id"');
  const manager = await makeSignedInUser(t, ['manager']);
  const page = await manager.agent.get(`/admin/users/${target.id}`);
  expect(page.status).toBe(200);
  expect(page.text).not.toContain('name="role_id"');
  expect((await request(t.app).get('/api/users/roles/assignable').set('Authorization', manager.bearer)).status).toBe(403);
});

test('an unknown user is a 404 page; the list walks the keyset pages of GET /api/users', async () => {
  const admin = await makeSignedInUser(t, ['super_admin']);
  expect((await admin.agent.get('/admin/users/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  const list = await admin.agent.get('/admin/users');
  expect(list.status).toBe(200);
  const apiFirst = await request(t.app).get('/api/users?paging=cursor&limit=50').set('Authorization', admin.bearer);
  const ids = [...list.text.matchAll(/href="\/admin\/users\/([0-9a-f-]{36})"/g)].map((m) => m[1]);
  expect(ids).toEqual(apiFirst.body.users.map((u: { id: string }) => u.id));
});

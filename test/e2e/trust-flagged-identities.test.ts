import { randomUUID } from 'node:crypto';
import request from 'supertest';
import * as flagMigration from '../../migrations/20261130100000_flag_privileged_identities';
import { makeSignedInUser, makeUser, uniqueEmail } from '../helpers/factories';
import { createTestApp, type TestApp } from '../helpers/test-app';
import { addProvider, startAndAuthorize, startUpstreamOidc, throughUpstream, type UpstreamOidc } from '../helpers/upstream';

/**
 * Issue 30 (mid-session review, low): identities linked to administrators' accounts under the rules before the fourth
 * review (automatic links by a trusted provider, pending links completed silently) survived the upgrade, and nothing
 * told them apart. Migration 20261130100000_flag_privileged_identities marks every identity of an account holding
 * admin rights `needs_confirmation` and audits `auth.identity.flagged`; such an identity signs nobody in until the
 * owner, signed in another way, signs in upstream as it from /account; admins see it paused in the console and API.
 */
let t: TestApp;
let upstream: UpstreamOidc;
let superAdmin: Awaited<ReturnType<typeof makeSignedInUser>>;
let providerId: string;

beforeAll(async () => {
  t = await createTestApp({ env: { IDP_ALLOW_PRIVATE: 'true' } });
  upstream = await startUpstreamOidc([`${t.config.baseUrl}/api/auth/idp/corp/callback`]);
  superAdmin = await makeSignedInUser(t, ['super_admin']);
  ({ id: providerId } = await addProvider(t, superAdmin.accessToken, {
    slug: 'corp',
    name: 'Corp SSO',
    type: 'oidc',
    issuer: upstream.issuer,
    client_id: upstream.clientId,
    client_secret: upstream.clientSecret,
  }));
});
afterAll(async () => {
  await upstream?.stop();
  await t?.close();
});

/** An identity as the old rules left it: a row in user_identities, and the upstream account behind it. */
async function oldIdentity(userId: string, sub: string): Promise<string> {
  const id = randomUUID();
  upstream.accounts.set(sub, { sub, email: uniqueEmail('upstream'), email_verified: true });
  const row = { id, user_id: userId, provider_id: providerId, issuer: upstream.issuer, subject: sub, email: null, created_at: new Date() };
  await t.db('user_identities').insert(row);
  return id;
}

/** Back to the schema before the upgrade, identities as the old rules left them, then the migration. */
async function upgradeWith(identities: Array<{ userId: string; sub: string }>): Promise<string[]> {
  await flagMigration.down(t.db);
  const ids: string[] = [];
  for (const i of identities) ids.push(await oldIdentity(i.userId, i.sub));
  await flagMigration.up(t.db);
  return ids;
}

async function signInUpstreamAs(sub: string) {
  upstream.signInAs(sub);
  const browser = request.agent(t.app);
  const { callbackPath } = await startAndAuthorize(browser, 'corp');
  return { browser, res: await browser.get(callbackPath) };
}

let admin: Awaited<ReturnType<typeof makeUser>>;
let custom: Awaited<ReturnType<typeof makeUser>>;
let plain: Awaited<ReturnType<typeof makeUser>>;
let adminIdentity: string;
let customIdentity: string;
let plainIdentity: string;
const ADMIN_SUB = `old-admin-${Date.now()}`;

beforeAll(async () => {
  admin = await makeUser(t, { roles: ['admin'] });
  plain = await makeUser(t);
  // A role of any name that grants a permission makes its holder an administrator (rbac-policy.ts holdsAdminRights).
  const [role] = await t
    .db('roles')
    .insert({ id: randomUUID(), name: `auditor-${Date.now()}`, description: 'x' })
    .returning('id');
  await t.db('role_permissions').insert({ role_id: role.id, permission: 'users:read' });
  custom = await makeUser(t);
  await t.db('user_roles').insert({ user_id: custom.id, role_id: role.id });
  [adminIdentity, customIdentity, plainIdentity] = await upgradeWith([
    { userId: admin.id, sub: ADMIN_SUB },
    { userId: custom.id, sub: `old-custom-${Date.now()}` },
    { userId: plain.id, sub: `old-plain-${Date.now()}` },
  ]);
});

test('the migration flags the identities of accounts holding admin rights, and audits each', async () => {
  const flags = Object.fromEntries(
    (await t.db('user_identities').whereIn('id', [adminIdentity, customIdentity, plainIdentity])).map((r) => [r.id, r.needs_confirmation]),
  );
  expect(flags).toEqual({ [adminIdentity]: true, [customIdentity]: true, [plainIdentity]: false });
  const rows = await t.db('audit_events').where({ type: 'auth.identity.flagged' }).whereIn('subject_id', [admin.id, custom.id, plain.id]);
  expect(rows.map((r) => r.subject_id).sort()).toEqual([admin.id, custom.id].sort());
  expect(rows.find((r) => r.subject_id === admin.id).detail).toMatchObject({
    identity_id: adminIdentity,
    provider: 'corp',
    upstream_subject: ADMIN_SUB,
    reason: 'privileged_account_linked_before_upgrade',
  });
});

test('a flagged identity signs nobody in (a page says why); admins see it paused in the API and the console', async () => {
  const { browser, res } = await signInUpstreamAs(ADMIN_SUB);
  expect(res.status).toBe(403);
  expect(res.text).toContain("linked to an administrator's account under earlier rules and is paused");
  expect((await browser.get('/api/auth/me')).status).toBe(401);

  const listed = await request(t.app).get(`/api/users/${admin.id}/identities`).set('Authorization', superAdmin.bearer);
  expect(listed.status).toBe(200);
  expect(listed.body.identities).toEqual([
    expect.objectContaining({ id: adminIdentity, provider: { slug: 'corp', name: 'Corp SSO' }, needs_confirmation: true }),
  ]);
  const unknown = await request(t.app).get(`/api/users/${randomUUID()}/identities`).set('Authorization', superAdmin.bearer);
  expect(unknown.status).toBe(404);
  const page = await request(t.app).get(`/admin/users/${admin.id}`).set('Cookie', `accessToken=${superAdmin.accessToken}`);
  expect(page.text).toContain('was linked to this administrator account automatically under earlier rules. It is paused');
});

test('the owner, signed in with the password, confirms it by signing in upstream as it from /account; then it signs in', async () => {
  const owner = request.agent(t.app);
  await owner.post('/api/auth/login').send({ email: custom.email, password: custom.password });
  const account = await owner.get('/account');
  expect(account.text).toContain('Linked automatically under earlier rules and paused');
  expect(account.text).toContain('Confirm with Corp SSO');
  expect((await owner.get('/api/auth/identities')).body.identities[0]).toMatchObject({ needs_confirmation: true });

  const sub = (await t.db('user_identities').where({ id: customIdentity }).first()).subject as string;
  upstream.signInAs(sub);
  const csrf = /name="csrf" value="([^"]+)"/.exec(account.text)![1]!;
  const start = await owner.post('/account/identities/link').type('form').send({ csrf, slug: 'corp' });
  expect(start.status).toBe(303);
  const back = await throughUpstream(start.headers.location);
  expect((await owner.get(back.pathname + back.search)).headers.location).toBe('/account?done=identity_linked#identities');

  expect((await t.db('user_identities').where({ id: customIdentity }).first()).needs_confirmation).toBe(false);
  await t.ctx.events.idle?.();
  const [confirmed] = await t.db('audit_events').where({ type: 'auth.identity.confirmed', subject_id: custom.id });
  expect(confirmed.detail).toMatchObject({ identity_id: customIdentity, upstream_subject: sub });
  const { browser } = await signInUpstreamAs(sub);
  expect((await browser.get('/api/auth/me')).body.user.id).toBe(custom.id);
});

test("another upstream account cannot confirm it: the owner's round trip as someone else links that one instead", async () => {
  const owner = request.agent(t.app);
  await owner.post('/api/auth/login').send({ email: admin.email, password: admin.password });
  const account = await owner.get('/account');
  const csrf = /name="csrf" value="([^"]+)"/.exec(account.text)![1]!;
  const stranger = `stranger-${Date.now()}`;
  upstream.accounts.set(stranger, { sub: stranger, email: uniqueEmail('stranger'), email_verified: true });
  upstream.signInAs(stranger);
  const start = await owner.post('/account/identities/link').type('form').send({ csrf, slug: 'corp' });
  const back = await throughUpstream(start.headers.location);
  await owner.get(back.pathname + back.search);
  expect((await t.db('user_identities').where({ id: adminIdentity }).first()).needs_confirmation).toBe(true);
});

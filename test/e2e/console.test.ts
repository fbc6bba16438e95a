import { createHash } from 'node:crypto';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { listDeclaredRoutes, guardOf } from '../../src/routes/route-table';
import { makeClient, makeSignedInUser, makeUser, signIn } from '../helpers/factories';
import { enrolTotp } from '../helpers/mfa';
import { csrfFrom } from '../helpers/oauth';
import { makeRole, roleIdByName } from '../helpers/rbac';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * The administration console (CONTRACT §14) over supertest: who gets in, the same refusals as the REST API, the CSRF
 * defence, and each action's effect in the database and the audit trail.
 */
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

async function adminAgent(roles: string[] = ['super_admin']) {
  const s = await makeSignedInUser(t, roles);
  return { ...s, csrf: await csrfFrom(s.agent, '/admin/users/new').catch(() => csrfFrom(s.agent, '/login')) };
}

async function auditTypes(subjectId: string): Promise<string[]> {
  await t.ctx.events.idle?.();
  return (await t.db('audit_events').where({ subject_id: subjectId }).orderBy('id')).map((e: { type: string }) => e.type);
}

/** Posts a console form (the agent holds the csrf cookie) and expects the post-redirect-get. */
async function postForm(agent: TestAgent, path: string, csrf: string, fields: Record<string, string | string[]> = {}) {
  return agent
    .post(path)
    .type('form')
    .send({ csrf, ...fields });
}

/** The flash shown on the page a post redirected to. */
async function flashAfter(agent: TestAgent, res: request.Response): Promise<string> {
  expect(res.status).toBe(303);
  const page = await agent.get(res.headers.location as string);
  const match = /<p class="(ok|error)" role="(?:status|alert)">([^<]*)<\/p>/.exec(page.text);
  return match ? `${match[1]}: ${match[2]}` : '(no flash)';
}

describe('who gets in', () => {
  test('not signed in: GET goes to /login with return_to, and the sign-in comes back there', async () => {
    const res = await request(t.app).get('/admin/users?q=x');
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(`/login?${new URLSearchParams({ return_to: '/admin/users?q=x' })}`);
  });

  test('signed in without an admin-tier role: a 403 page, even holding every permission through a custom role', async () => {
    const plain = await makeSignedInUser(t);
    const res = await plain.agent.get('/admin');
    expect(res.status).toBe(403);
    expect(res.type).toBe('text/html');
    expect(res.text).toContain('The administration console is for administrators');
    const role = await makeRole(t, { permissions: ['users:read'] });
    const holder = await makeUser(t);
    await t.db('user_roles').insert({ user_id: holder.id, role_id: role.id });
    const session = await signIn(t, holder);
    expect((await session.agent.get('/admin/users')).status).toBe(403);
  });

  test('every console page answers no-store and frame-ancestors none', async () => {
    const { agent } = await adminAgent();
    for (const path of [
      '/admin',
      '/admin/users',
      '/admin/roles',
      '/admin/applications',
      '/admin/audit',
      '/admin/signing-keys',
      '/admin/settings',
    ]) {
      const res = await agent.get(path);
      expect([path, res.status]).toEqual([path, 200]);
      expect(res.headers['cache-control']).toContain('no-store');
      expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    }
  });

  test('a manager sees users but is refused what the API refuses a manager (applications, roles, audit)', async () => {
    const { agent } = await adminAgent(['manager']);
    expect((await agent.get('/admin/users')).status).toBe(200);
    for (const path of ['/admin/applications', '/admin/roles', '/admin/audit', '/admin/settings']) {
      const res = await agent.get(path);
      expect([path, res.status]).toEqual([path, 403]);
      expect(res.text).toContain('Not allowed');
    }
  });

  test('MFA_REQUIRED_FOR_ADMINS: an admin signed in without a second factor gets a 403 page pointing to enrolment', async () => {
    const strict = await createTestApp({ env: { MFA_REQUIRED_FOR_ADMINS: 'true' } });
    try {
      const admin = await makeUser(strict, { roles: ['admin'] });
      const { agent } = await signIn(strict, admin);
      const res = await agent.get('/admin/users');
      expect(res.status).toBe(403);
      expect(res.text).toContain('second factor');
    } finally {
      await strict.close();
    }
  });

  test('an admin who signs in at /login without return_to lands in the console; others on the signed-in page', async () => {
    for (const [roles, landing] of [
      [['admin'], '/admin'],
      [[], '/login'],
    ] as const) {
      const user = await makeUser(t, { roles: [...roles] });
      const agent = request.agent(t.app);
      const csrf = await csrfFrom(agent, '/login');
      const res = await agent.post('/login').type('form').send({ csrf, email: user.email, password: user.password });
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe(landing);
    }
  });
});

describe('every console route is guarded', () => {
  // The guard of a console action is its REST endpoint's own (src/console/action.ts builds it from the endpoint object),
  // so no console route names the API route it mirrors and nothing has to keep two guards equal.
  test('a page for signed-in admins with a permission, role or admin guard', () => {
    const consoleRoutes = listDeclaredRoutes(t.app).filter((r) => r.path.startsWith('/admin'));
    expect(consoleRoutes.length).toBeGreaterThan(20);
    const wrong: string[] = [];
    for (const r of consoleRoutes) {
      expect([r.path, r.decl.auth]).toEqual([r.path, 'page']);
      if (!guardOf(r.decl)) wrong.push(`${r.method} ${r.path}: no guard`);
    }
    expect(wrong).toEqual([]);
  });
});

describe('CSRF and bad input', () => {
  test('a post without the CSRF pair, or from another origin, is refused and changes nothing', async () => {
    const { agent, csrf } = await adminAgent();
    const target = await makeUser(t);
    const none = await agent.post(`/admin/users/${target.id}/deactivate`).type('form').send({ confirm: 'yes' });
    expect(none.status).toBe(403);
    const foreign = await agent
      .post(`/admin/users/${target.id}/deactivate`)
      .set('Origin', 'https://evil.test')
      .type('form')
      .send({ csrf, confirm: 'yes' });
    expect(foreign.status).toBe(403);
    expect((await t.db('users').where({ id: target.id }).first()).is_active).toBe(true);
  });

  test('a bad form re-renders with the API schema errors next to the fields (400, never 500)', async () => {
    const { agent, csrf } = await adminAgent();
    const res = await postForm(agent, '/admin/applications', csrf, {
      name: 'Bad',
      redirect_uris: 'javascript:alert(1)',
      scopes: ['openid'],
    });
    expect(res.status).toBe(400);
    expect(res.text).toContain('aria-invalid="true"');
    expect(res.text).toContain('class="field-error"');
    const badId = await agent.get('/admin/users/not-a-uuid');
    expect(badId.status).toBe(404);
    const gone = await agent.get('/admin/applications/no-such-client');
    expect(gone.status).toBe(404);
  });

  test('user data is escaped on every page', async () => {
    const { agent } = await adminAgent();
    const user = await makeUser(t, { firstName: '<script>alert(1)</script>', lastName: '"><img src=x>' });
    const list = await agent.get('/admin/users');
    const detail = await agent.get(`/admin/users/${user.id}`);
    for (const page of [list.text, detail.text]) {
      expect(page).not.toContain('<script>alert(1)</script>');
      expect(page).not.toContain('<img src=x>');
    }
    expect(detail.text).toContain('&lt;script>alert(1)&lt;/script>');
  });
});

describe('users', () => {
  test('search and filters: by email, active / inactive, admin tier; 50 a page', async () => {
    const { agent } = await adminAgent();
    const marker = `zz${Date.now()}`;
    const active = await makeUser(t, { email: `${marker}-a@example.test` });
    const inactive = await makeUser(t, { email: `${marker}-b@example.test`, isActive: false });
    const tier = await makeUser(t, { email: `${marker}-c@example.test`, roles: ['manager'] });
    const ids = (html: string) => [active, inactive, tier].filter((u) => html.includes(u.id)).map((u) => u.email);
    expect(ids((await agent.get(`/admin/users?q=${marker}`)).text)).toHaveLength(3);
    expect(ids((await agent.get(`/admin/users?q=${marker}&status=inactive`)).text)).toEqual([inactive.email]);
    expect(ids((await agent.get(`/admin/users?q=${marker}&status=active&tier=admin`)).text)).toEqual([tier.email]);
    for (let i = 0; i < 51; i++) await makeUser(t, { email: `${marker}-bulk${i}@example.test` });
    const first = await agent.get(`/admin/users?q=${marker}-bulk`);
    expect(first.text.match(/<tr>/g)?.length).toBe(51); // the header row and 50 users
    expect(first.text).toContain('Next page');
    const next = /<a href="([^"]+)">Next page/.exec(first.text)![1]!.replace(/&amp;/g, '&');
    const second = await agent.get(next);
    expect(second.text.match(/<tr>/g)?.length).toBe(2);
    expect(second.text).toContain('Previous page');
    expect(second.text).not.toContain('Next page');
  });

  test('deactivate asks first, then deactivates, ends sessions and is audited; re-activate', async () => {
    const { agent, csrf } = await adminAgent();
    const target = await makeSignedInUser(t);
    const ask = await postForm(agent, `/admin/users/${target.user.id}/deactivate`, csrf);
    expect(ask.status).toBe(200);
    expect(ask.text).toContain(`Deactivate ${target.user.email}?`);
    expect((await t.db('users').where({ id: target.user.id }).first()).is_active).toBe(true);
    const done = await postForm(agent, `/admin/users/${target.user.id}/deactivate`, csrf, { confirm: 'yes' });
    expect(await flashAfter(agent, done)).toBe('ok: User deactivated; their sessions have ended.');
    expect((await t.db('users').where({ id: target.user.id }).first()).is_active).toBe(false);
    expect((await request(t.app).get('/api/auth/me').set('Authorization', target.bearer)).status).toBe(401);
    const back = await postForm(agent, `/admin/users/${target.user.id}/activate`, csrf);
    expect(await flashAfter(agent, back)).toBe('ok: User re-activated.');
    expect((await t.db('users').where({ id: target.user.id }).first()).is_active).toBe(true);
    expect(await auditTypes(target.user.id)).toEqual(expect.arrayContaining(['user.deactivated', 'user.activated']));
  });

  test('profile edit goes through the API rules: saved, audited; a manager may not change an admin (§8)', async () => {
    const { agent, csrf } = await adminAgent();
    const target = await makeUser(t);
    const res = await postForm(agent, `/admin/users/${target.id}/profile`, csrf, {
      first_name: 'Renamed',
      last_name: target.lastName,
      email: target.email,
      email_verified: 'true',
    });
    expect(await flashAfter(agent, res)).toBe('ok: Profile saved.');
    expect((await t.db('users').where({ id: target.id }).first()).first_name).toBe('Renamed');
    expect(await auditTypes(target.id)).toContain('user.changed');

    const manager = await adminAgent(['manager']);
    const admin = await makeUser(t, { roles: ['admin'] });
    const refused = await postForm(manager.agent, `/admin/users/${admin.id}/profile`, manager.csrf, {
      first_name: admin.firstName,
      last_name: admin.lastName,
      email: 'taken-over@example.test',
      email_verified: 'true',
    });
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('aria-invalid="true"');
    expect((await t.db('users').where({ id: admin.id }).first()).email).toBe(admin.email);
  });

  test('roles: assign and remove (with confirmation), audited', async () => {
    const { agent, csrf } = await adminAgent();
    const target = await makeUser(t);
    const role = await makeRole(t, { application: 'crm', permissions: ['users:read'] });
    expect(await flashAfter(agent, await postForm(agent, `/admin/users/${target.id}/roles`, csrf, { role_id: role.id }))).toBe(
      `ok: Role ${role.name} assigned.`,
    );
    expect(await t.db('user_roles').where({ user_id: target.id, role_id: role.id }).first()).toBeDefined();
    expect((await agent.get(`/admin/users/${target.id}`)).text).toContain('crm');
    expect((await postForm(agent, `/admin/users/${target.id}/roles/${role.id}/remove`, csrf)).status).toBe(200);
    expect(
      await flashAfter(agent, await postForm(agent, `/admin/users/${target.id}/roles/${role.id}/remove`, csrf, { confirm: 'yes' })),
    ).toBe('ok: Role removed.');
    expect(await t.db('user_roles').where({ user_id: target.id, role_id: role.id }).first()).toBeUndefined();
    expect(await auditTypes(target.id)).toEqual(expect.arrayContaining(['role.assigned', 'role.removed']));
  });

  test('a manager cannot grant admin (the strictly-more-rights rule): refused, nothing assigned', async () => {
    const manager = await adminAgent(['manager']);
    const target = await makeUser(t);
    const adminRole = await roleIdByName(t, 'admin');
    const res = await postForm(manager.agent, `/admin/users/${target.id}/roles`, manager.csrf, { role_id: adminRole });
    // users:manage_roles is not a manager's permission: refused by the guard, as the API refuses it.
    expect(res.status).toBe(403);
    expect(await t.db('user_roles').where({ user_id: target.id }).first()).toBeUndefined();
  });

  test('sessions: revoke one, with confirmation; audited', async () => {
    const { agent, csrf } = await adminAgent();
    const target = await makeSignedInUser(t);
    const detail = await agent.get(`/admin/users/${target.user.id}`);
    const sessionId = /\/sessions\/([0-9a-f-]{36})\/revoke/.exec(detail.text)![1]!;
    const done = await postForm(agent, `/admin/users/${target.user.id}/sessions/${sessionId}/revoke`, csrf, { confirm: 'yes' });
    expect(await flashAfter(agent, done)).toBe('ok: Session revoked.');
    expect((await t.db('sessions').where({ id: sessionId }).first()).revoked_at).not.toBeNull();
    expect((await request(t.app).get('/api/auth/me').set('Authorization', target.bearer)).status).toBe(401);
    expect(await auditTypes(target.user.id)).toContain('auth.session.revoked');
    const again = await postForm(agent, `/admin/users/${target.user.id}/sessions/${sessionId}/revoke`, csrf, { confirm: 'yes' });
    expect(await flashAfter(agent, again)).toBe('error: Session not found');
  });

  test('second factors: reset removes them, mails the owner, is audited; not for an admin by a lesser admin', async () => {
    const { agent, csrf } = await adminAgent();
    const target = await makeSignedInUser(t);
    await enrolTotp(t, target.agent);
    expect((await agent.get(`/admin/users/${target.user.id}`)).text).toContain('Reset second factors');
    const mails = t.mails.length;
    const done = await postForm(agent, `/admin/users/${target.user.id}/mfa/reset`, csrf, { confirm: 'yes' });
    expect(await flashAfter(agent, done)).toBe('ok: Second factors reset; the user was notified by email.');
    expect(await t.db('mfa_totp').where({ user_id: target.user.id }).first()).toBeUndefined();
    expect(await t.db('mfa_recovery_codes').where({ user_id: target.user.id }).first()).toBeUndefined();
    expect(t.mails.slice(mails).some((m) => m.to === target.user.email)).toBe(true);
    expect(await auditTypes(target.user.id)).toContain('mfa.factors.reset');

    const admin = await adminAgent(['admin']);
    const superAdmin = await makeSignedInUser(t, ['super_admin']);
    await enrolTotp(t, superAdmin.agent);
    const refused = await postForm(admin.agent, `/admin/users/${superAdmin.user.id}/mfa/reset`, admin.csrf, { confirm: 'yes' });
    expect((await flashAfter(admin.agent, refused)).startsWith('error:')).toBe(true);
    expect(await t.db('mfa_totp').where({ user_id: superAdmin.user.id }).first()).toBeDefined();
  });

  test('send a set-password link: mailed, audited', async () => {
    const { agent, csrf } = await adminAgent();
    const target = await makeUser(t);
    const mails = t.mails.length;
    const done = await postForm(agent, `/admin/users/${target.id}/password-link`, csrf);
    expect(await flashAfter(agent, done)).toBe('ok: A set-password link was sent (valid one hour).');
    const mail = t.mails.slice(mails).find((m) => m.to === target.email);
    expect(mail?.text).toMatch(/\/set-password\?token=/);
    expect(await auditTypes(target.id)).toContain('user.password_link_sent');
  });

  test('invite: creates the user and mails the link; a taken address re-renders the form', async () => {
    const { agent, csrf } = await adminAgent();
    const email = `invited-${Date.now()}@example.test`;
    const res = await postForm(agent, '/admin/users', csrf, { email, first_name: 'In', last_name: 'Vited' });
    expect(res.status).toBe(303);
    expect(await t.db('users').where({ email }).first()).toBeDefined();
    const again = await postForm(agent, '/admin/users', csrf, { email, first_name: 'In', last_name: 'Vited' });
    expect(again.status).toBe(409);
  });
});

describe('roles', () => {
  test('a super_admin creates, edits permissions of and deactivates a role; an admin only reads', async () => {
    const { agent, csrf } = await adminAgent();
    const name = `console-${Date.now()}`;
    const created = await postForm(agent, '/admin/roles', csrf, {
      name,
      description: 'Made here',
      application: '',
      permissions: ['users:read'],
    });
    expect(created.status).toBe(303);
    const role = await t.db('roles').where({ name }).first();
    expect(role).toBeDefined();
    const edit = await postForm(agent, `/admin/roles/${role.id}`, csrf, {
      name,
      description: 'Changed',
      permissions: ['users:read', 'users:write'],
    });
    expect(await flashAfter(agent, edit)).toBe('ok: Role saved.');
    expect((await t.db('role_permissions').where({ role_id: role.id })).map((r: { permission: string }) => r.permission).sort()).toEqual([
      'users:read',
      'users:write',
    ]);
    const off = await postForm(agent, `/admin/roles/${role.id}/deactivate`, csrf, { confirm: 'yes' });
    expect(await flashAfter(agent, off)).toBe('ok: Role deactivated.');
    expect((await t.db('roles').where({ id: role.id }).first()).is_active).toBe(false);

    const admin = await adminAgent(['admin']);
    expect((await admin.agent.get(`/admin/roles/${role.id}`)).status).toBe(200);
    expect((await postForm(admin.agent, `/admin/roles/${role.id}`, admin.csrf, { name, description: 'x', permissions: [] })).status).toBe(
      403,
    );
  });

  test('a stale form on a deleted role gives a clear message', async () => {
    const { agent, csrf } = await adminAgent();
    const res = await postForm(agent, '/admin/roles/00000000-0000-4000-8000-000000000000/deactivate', csrf, { confirm: 'yes' });
    expect(await flashAfter(agent, res)).toMatch(/^error: Role not found/);
  });
});

describe('applications', () => {
  test('create shows the secret once with the settings to paste; it works and never appears again', async () => {
    const { agent, csrf } = await adminAgent();
    const res = await postForm(agent, '/admin/applications', csrf, {
      name: 'Console App',
      type: 'confidential',
      grant_types: ['authorization_code', 'refresh_token'],
      redirect_uris: 'https://console-app.test/cb\nhttps://console-app.test/cb2',
      post_logout_redirect_uris: '',
      scopes: ['openid', 'profile'],
    });
    expect(res.status).toBe(201);
    expect(res.headers['cache-control']).toContain('no-store');
    const clientId = /id="client-id">([^<]+)</.exec(res.text)![1]!;
    const secret = /id="client-secret">([^<]+)</.exec(res.text)![1]!;
    expect(res.text).toContain(`${t.config.oidcIssuer}/.well-known/openid-configuration`);
    expect(res.text).toContain('https://console-app.test/cb');
    const row = await t.db('oauth_clients').where({ client_id: clientId }).first();
    expect(row.secret_hash).toBe(createHash('sha256').update(secret).digest('hex'));
    expect(row.redirect_uris).toEqual(['https://console-app.test/cb', 'https://console-app.test/cb2']);
    const detail = await agent.get(`/admin/applications/${clientId}`);
    expect(detail.status).toBe(200);
    expect(detail.text).not.toContain(secret);
    await t.ctx.events.idle?.();
    expect(
      await t
        .db('audit_events')
        .where({ type: 'oauth.client.created' })
        .whereRaw(`detail::text like ?`, [`%${clientId}%`])
        .orWhere({ type: 'oauth.client.created', subject_id: clientId })
        .first(),
    ).toBeDefined();
  });

  test('edit, rotate (new secret once, old one dead) and deactivate', async () => {
    const { agent, csrf } = await adminAgent();
    const client = await makeClient(t, { name: 'Before' });
    const edit = await postForm(agent, `/admin/applications/${client.clientId}`, csrf, {
      name: 'After',
      grant_types: ['authorization_code', 'refresh_token'],
      redirect_uris: 'https://after.test/cb',
      post_logout_redirect_uris: 'https://after.test/bye',
      scopes: ['openid', 'email'],
    });
    expect(await flashAfter(agent, edit)).toBe('ok: Application saved.');
    const row = await t.db('oauth_clients').where({ client_id: client.clientId }).first();
    expect([row.name, row.redirect_uris, row.scopes]).toEqual(['After', ['https://after.test/cb'], ['openid', 'email']]);

    expect((await postForm(agent, `/admin/applications/${client.clientId}/rotate`, csrf)).text).toContain('Rotate the secret of After?');
    const rotated = await postForm(agent, `/admin/applications/${client.clientId}/rotate`, csrf, { confirm: 'yes' });
    expect(rotated.status).toBe(200);
    const secret = /id="client-secret">([^<]+)</.exec(rotated.text)![1]!;
    expect(secret).not.toBe(client.clientSecret);
    expect((await t.db('oauth_clients').where({ client_id: client.clientId }).first()).secret_hash).toBe(
      createHash('sha256').update(secret).digest('hex'),
    );

    const off = await postForm(agent, `/admin/applications/${client.clientId}/deactivate`, csrf, { confirm: 'yes' });
    expect(await flashAfter(agent, off)).toBe('ok: Application deactivated.');
    expect((await t.db('oauth_clients').where({ client_id: client.clientId }).first()).is_active).toBe(false);
  });

  test('oauth_clients:read alone: applications shown without edit, rotate or deactivate controls, and those refused', async () => {
    const admin = await makeUser(t, { roles: ['manager'] });
    const role = await makeRole(t, { permissions: ['oauth_clients:read'] });
    await t.db('user_roles').insert({ user_id: admin.id, role_id: role.id });
    const { agent } = await signIn(t, admin);
    const csrf = await csrfFrom(agent, '/admin/users');
    const client = await makeClient(t);
    const page = await agent.get(`/admin/applications/${client.clientId}`);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('Rotate secret');
    expect((await postForm(agent, `/admin/applications/${client.clientId}/rotate`, csrf, { confirm: 'yes' })).status).toBe(403);
  });
});

describe('audit log', () => {
  test('filters by type, actor and subject; date range; CSV export of the filtered rows', async () => {
    const { agent, user } = await adminAgent();
    const target = await makeUser(t);
    await request(t.app).post('/api/auth/login').send({ email: target.email, password: 'wrong-password' });
    await t.ctx.events.idle?.();
    const page = await agent.get(`/admin/audit?type=auth.login.failed&subject=${target.id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('auth.login.failed');
    const none = await agent.get(`/admin/audit?type=auth.login.succeeded&subject=${target.id}`);
    expect(none.text).toContain('No events.');
    const byActor = await agent.get(`/admin/audit?actor=${user.id}`);
    expect(byActor.status).toBe(200);
    const csv = await agent.get(`/admin/audit.csv?type=auth.login.failed&subject=${target.id}`);
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toContain('text/csv');
    const rows = csv.text.trim().split('\r\n');
    expect(rows[0]).toBe(
      'id,occurred_at,type,actor_name,actor_email,actor_id,subject_name,subject_email,subject_id,application,client_id,ip,user_agent,request_id,detail,detail_json',
    );
    expect(rows).toHaveLength(2);
    expect(rows[1]).toContain('auth.login.failed');
    const future = await agent.get(`/admin/audit?subject=${target.id}&from=2999-01-01`);
    expect(future.text).toContain('No events.');
    for (const from of ['2026-02-30', 'yesterday']) {
      const bad = await agent.get(`/admin/audit?from=${from}`);
      expect(bad.status).toBe(400);
      expect(bad.text).toContain('aria-invalid="true"');
    }
  });

  test('the overview counts sign-ins per day from the audit trail, as a chart and a table', async () => {
    const { agent } = await adminAgent(['admin']);
    const res = await agent.get('/admin');
    expect(res.status).toBe(200);
    expect(res.text).toContain('<svg');
    const today = t.clock.now().toISOString().slice(0, 10);
    expect(res.text).toMatch(new RegExp(`<td data-label="Day">${today}</td><td data-label="Sign-ins">[1-9]`));
  });
});

describe('signing keys and settings', () => {
  test('a super_admin rotates the signing key (confirmed): a new current key, the old one retired, audited', async () => {
    const { agent, csrf } = await adminAgent();
    await request(t.app).get('/api/oauth/jwks');
    const before = await t.db('oidc_signing_keys').whereNull('retired_at').first();
    const res = await postForm(agent, '/admin/signing-keys/rotate', csrf, { confirm: 'yes' });
    expect(await flashAfter(agent, res)).toMatch(/^ok: New signing key .+ is current\.$/);
    const after = await t.db('oidc_signing_keys').whereNull('retired_at').first();
    expect(after.kid).not.toBe(before.kid);
    const admin = await adminAgent(['admin']);
    expect((await admin.agent.get('/admin/signing-keys')).status).toBe(200);
    expect((await postForm(admin.agent, '/admin/signing-keys/rotate', admin.csrf, { confirm: 'yes' })).status).toBe(403);
  });

  test('settings show the effective configuration with secrets masked', async () => {
    const { agent } = await adminAgent();
    const res = await agent.get('/admin/settings');
    // Each value by the environment variable that sets it; a value the server derives by its own name.
    expect(res.text).toContain('<code>BASE_URL</code>');
    expect(res.text).not.toContain('<code>baseUrl</code>');
    expect(res.text).toContain('<code>baseOrigin</code>');
    expect(res.text).not.toContain(t.config.jwtAccessSecret);
    expect(res.text).not.toContain(t.config.jwtRefreshSecret);
    expect(res.text).toContain('•••••• (set)');
  });
});

describe('the REST twins of the console-only actions', () => {
  test('GET and DELETE /api/users/:userId/sessions, GET /api/users/:userId/mfa, POST /api/users/:userId/set-password-link', async () => {
    const admin = await makeSignedInUser(t, ['admin']);
    const target = await makeSignedInUser(t);
    await enrolTotp(t, target.agent);
    const sessions = await request(t.app).get(`/api/users/${target.user.id}/sessions`).set('Authorization', admin.bearer);
    expect(sessions.status).toBe(200);
    expect(sessions.body.sessions).toHaveLength(1);
    const mfa = await request(t.app).get(`/api/users/${target.user.id}/mfa`).set('Authorization', admin.bearer);
    expect(mfa.body).toEqual({ totp: true, passkeys: [], recovery_codes_left: 10 });
    const revoke = await request(t.app)
      .delete(`/api/users/${target.user.id}/sessions/${sessions.body.sessions[0].id}`)
      .set('Authorization', admin.bearer);
    expect(revoke.status).toBe(204);
    expect((await request(t.app).get('/api/auth/me').set('Authorization', target.bearer)).status).toBe(401);
    const other = await makeSignedInUser(t);
    const otherSession = (await t.db('sessions').where({ user_id: other.user.id }).first()).id;
    expect(
      (await request(t.app).delete(`/api/users/${target.user.id}/sessions/${otherSession}`).set('Authorization', admin.bearer)).status,
    ).toBe(404);
    const mails = t.mails.length;
    const link = await request(t.app).post(`/api/users/${target.user.id}/set-password-link`).set('Authorization', admin.bearer);
    expect(link.status).toBe(202);
    expect(t.mails.slice(mails).some((m) => m.to === target.user.email)).toBe(true);
    // A manager may not send a link to an admin's mailbox (CONTRACT §8 take-over rule) -- users:write is not enough.
    const manager = await makeUserWithPermissionsAndTier(['users:write']);
    const refused = await request(t.app).post(`/api/users/${admin.user.id}/set-password-link`).set('Authorization', manager);
    expect(refused.status).toBe(403);
  });
});

async function makeUserWithPermissionsAndTier(permissions: string[]): Promise<string> {
  const user = await makeUser(t, { roles: ['manager'] });
  const role = await makeRole(t, { permissions });
  await t.db('user_roles').insert({ user_id: user.id, role_id: role.id });
  return `Bearer ${(await signIn(t, user)).accessToken}`;
}

import request from 'supertest';
import { makeSignedInUser, makeUser, signIn, uniqueEmail } from '../helpers/factories';
import { issueOAuthTokens } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * The audit trail end to end: what people and admins do lands in audit_events (actor, subject, client, IP, user
 * agent, request id, small detail), is read back through GET /api/admin/audit-events with filters and cursor
 * pagination, users see their own through GET /api/auth/activity, and the table refuses UPDATE and DELETE.
 */
let t: TestApp;
let admin: Awaited<ReturnType<typeof makeSignedInUser>>;

beforeAll(async () => {
  t = await createTestApp({ env: { TRUST_PROXY: '1' } });
  admin = await makeSignedInUser(t, ['super_admin']);
});
afterAll(async () => {
  await t.close();
});

interface EventBody {
  id: string;
  type: string;
  occurred_at: string;
  actor_id: string | null;
  subject_id: string | null;
  client_id: string | null;
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  detail: Record<string, unknown>;
}

async function audit(query: Record<string, string> = {}): Promise<{ events: EventBody[]; next_cursor: string | null }> {
  const res = await request(t.app).get('/api/admin/audit-events').query(query).set('Authorization', admin.bearer);
  expect(res.status).toBe(200);
  expect(res.headers['cache-control']).toBe('no-store');
  return res.body;
}

test('sign-ins, password change, sessions, logout: recorded with actor, subject, IP, user agent and request id', async () => {
  const user = await makeUser(t);
  const bad = await request(t.app)
    .post('/api/auth/login')
    .set('User-Agent', 'AuditTest/1.0')
    .set('X-Forwarded-For', '203.0.113.7')
    .set('X-Request-Id', 'req-audit-0001')
    .send({ email: user.email, password: 'wrong-password' });
  expect(bad.status).toBe(401);
  const session = await signIn(t, user);
  const change = await request(t.app)
    .post('/api/auth/change-password')
    .set('Authorization', `Bearer ${session.accessToken}`)
    .send({ current_password: user.password, new_password: 'new-password-2' });
  expect(change.status).toBe(200);
  const other = await signIn(t, { email: user.email, password: 'new-password-2' });
  expect((await request(t.app).post('/api/auth/sessions/revoke-others').set('Authorization', `Bearer ${other.accessToken}`)).status).toBe(
    200,
  );
  expect((await request(t.app).post('/api/auth/logout').set('Authorization', `Bearer ${other.accessToken}`)).status).toBe(200);

  const { events } = await audit({ subject: user.id });
  const types = events.map((e) => e.type).reverse();
  expect(types).toEqual([
    'auth.login.failed',
    'auth.login.succeeded',
    'auth.password.changed',
    'auth.login.succeeded',
    'auth.session.revoked',
  ]);
  const failed = events.find((e) => e.type === 'auth.login.failed')!;
  expect(failed).toMatchObject({
    actor_id: null,
    subject_id: user.id,
    ip: '203.0.113.7',
    user_agent: 'AuditTest/1.0',
    request_id: 'req-audit-0001',
    detail: { email: user.email, reason: 'bad_password' },
  });
  expect(new Date(failed.occurred_at).getTime()).toBeLessThanOrEqual(t.clock.now().getTime());
  const changed = events.find((e) => e.type === 'auth.password.changed')!;
  expect(changed.actor_id).toBe(user.id);
  expect(changed.request_id).toMatch(/^[0-9a-f-]{36}$/);

  // Logout names no subject: it is found by its actor.
  const byActor = await audit({ actor: user.id, type: 'auth.logout' });
  expect(byActor.events).toHaveLength(1);

  // No secret anywhere in the trail.
  const everything = JSON.stringify((await t.db('audit_events').select('*')) as unknown[]);
  expect(everything).not.toContain(user.password);
  expect(everything).not.toContain('new-password-2');
  expect(everything).not.toContain(session.accessToken);
  expect(everything).not.toContain(session.refreshToken);
});

test('admin actions: roles, users and clients, each with the admin as actor', async () => {
  const target = await makeUser(t);
  const auth = { Authorization: admin.bearer };
  const role = await request(t.app)
    .post('/api/rbac/roles')
    .set(auth)
    .send({ name: `auditors-${Date.now()}`, permissions: ['users:read'] });
  expect(role.status).toBe(201);
  const roleId = role.body.role.id as string;
  expect((await request(t.app).put(`/api/rbac/roles/${roleId}`).set(auth).send({ description: 'Read users' })).status).toBe(200);
  expect((await request(t.app).post(`/api/rbac/users/${target.id}/roles`).set(auth).send({ role_id: roleId })).status).toBeLessThan(300);
  expect((await request(t.app).delete(`/api/rbac/users/${target.id}/roles/${roleId}`).set(auth)).status).toBeLessThan(300);
  expect((await request(t.app).put(`/api/users/${target.id}`).set(auth).send({ is_active: false })).status).toBe(200);
  expect(
    (
      await request(t.app)
        .put(`/api/users/${target.id}`)
        .set(auth)
        .send({ is_active: true, email: uniqueEmail('moved') })
    ).status,
  ).toBe(200);

  const created = await request(t.app)
    .post('/api/admin/oauth-clients')
    .set(auth)
    .send({ name: 'Audited app', redirect_uris: ['https://audited.test/cb'], scopes: ['openid'] });
  expect(created.status).toBe(201);
  const clientId = created.body.client.client_id as string;
  expect((await request(t.app).put(`/api/admin/oauth-clients/${clientId}`).set(auth).send({ name: 'Audited app 2' })).status).toBe(200);
  expect((await request(t.app).post(`/api/admin/oauth-clients/${clientId}/rotate-secret`).set(auth)).status).toBe(200);
  expect((await request(t.app).delete(`/api/admin/oauth-clients/${clientId}`).set(auth)).status).toBe(200);

  const mine = (await audit({ actor: admin.user.id, limit: '100' })).events;
  const seen = (type: string, subject: string) => mine.filter((e) => e.type === type && e.subject_id === subject);
  expect(seen('role.created', roleId)).toHaveLength(1);
  expect(seen('role.changed', roleId)[0]!.detail).toMatchObject({ fields: ['description'] });
  expect(seen('role.assigned', target.id)[0]!.detail).toMatchObject({ role_id: roleId });
  expect(seen('role.removed', target.id)).toHaveLength(1);
  expect(seen('user.deactivated', target.id)).toHaveLength(1);
  expect(seen('user.activated', target.id)).toHaveLength(1);
  expect(seen('auth.email.changed', target.id)).toHaveLength(1);
  expect(seen('user.changed', target.id)).toHaveLength(2);
  expect(seen('oauth.client.created', clientId)[0]!.client_id).toBe(clientId);
  expect(seen('oauth.client.changed', clientId).length).toBeGreaterThanOrEqual(1);
  expect(seen('oauth.client.secret_rotated', clientId)).toHaveLength(1);
  expect(seen('oauth.client.deactivated', clientId)).toHaveLength(1);
  // The new client secret is in no event.
  expect(JSON.stringify(mine)).not.toMatch(/client_secret|secret_hash/);
});

test('OAuth: a connected app dropped by its user is recorded; token issuance is counted, not stored', async () => {
  const { user, agent, accessToken } = await makeSignedInUser(t);
  const created = await request(t.app)
    .post('/api/admin/oauth-clients')
    .set('Authorization', admin.bearer)
    .send({ name: 'Grant app', redirect_uris: ['https://grant.test/cb'], scopes: ['openid', 'profile', 'email'] });
  const client = {
    clientId: created.body.client.client_id as string,
    clientSecret: created.body.client_secret as string,
    redirectUris: ['https://grant.test/cb'],
  };
  await issueOAuthTokens(t, agent, client as Parameters<typeof issueOAuthTokens>[2]);
  const drop = await request(t.app).delete(`/api/auth/apps/${client.clientId}`).set('Authorization', `Bearer ${accessToken}`);
  expect(drop.status).toBeLessThan(300);
  const { events } = await audit({ subject: user.id, type: 'oauth.grant.dropped,oauth.token.issued' });
  expect(events.map((e) => e.type)).toEqual(['oauth.grant.dropped']);
  expect(events[0]).toMatchObject({ actor_id: user.id, client_id: client.clientId });
});

test('filters by type and time range, and walks every page with the cursor exactly once', async () => {
  const user = await makeUser(t);
  for (let i = 0; i < 5; i++) {
    await request(t.app)
      .post('/api/auth/login')
      .send({ email: user.email, password: `wrong-${i}-password` });
  }
  const all = await audit({ subject: user.id, type: 'auth.login.failed' });
  expect(all.events).toHaveLength(5);
  expect(all.next_cursor).toBeNull();

  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page: { events: EventBody[]; next_cursor: string | null } = await audit({
      subject: user.id,
      limit: '2',
      ...(cursor ? { cursor } : {}),
    });
    expect(page.events.length).toBeLessThanOrEqual(2);
    seen.push(...page.events.map((e) => e.id));
    cursor = page.next_cursor;
    pages++;
  } while (cursor);
  expect(pages).toBe(3);
  expect(seen).toEqual(all.events.map((e) => e.id));

  const future = new Date(t.clock.now().getTime() + 3600_000).toISOString();
  expect((await audit({ subject: user.id, from: future })).events).toHaveLength(0);
  expect((await audit({ subject: user.id, to: future })).events).toHaveLength(5);
});

test('GET /api/admin/audit-events/count: what the same filter matches, exactly, cursors and limit ignored', async () => {
  const user = await makeUser(t);
  for (let i = 0; i < 3; i++) {
    await request(t.app)
      .post('/api/auth/login')
      .send({ email: user.email, password: `wrong-${i}-password` });
  }
  const count = (query: Record<string, string>, bearer = admin.bearer) =>
    request(t.app).get('/api/admin/audit-events/count').query(query).set('Authorization', bearer);
  const res = await count({ subject: user.id, type: 'auth.login.failed', limit: '1' });
  expect(res.status).toBe(200);
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.body).toEqual({ count: { kind: 'exact', value: 3 } });
  const future = new Date(t.clock.now().getTime() + 3600_000).toISOString();
  expect((await count({ subject: user.id, from: future })).body).toEqual({ count: { kind: 'exact', value: 0 } });
  expect((await count({ type: 'no.such.type' })).status).toBe(400);
  expect((await count({}, (await makeSignedInUser(t)).bearer)).status).toBe(403);
});

test('bad queries answer 400; only system:manage_users reads the trail', async () => {
  for (const query of [
    { type: 'no.such.type' },
    { cursor: 'bm90LWFuLWlk' },
    { from: 'yesterday' },
    { from: '2026-11-22T10:00:00Z', to: '2026-11-22T09:00:00Z' },
    { limit: 'x' },
  ]) {
    const res = await request(t.app).get('/api/admin/audit-events').query(query).set('Authorization', admin.bearer);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
  }
  expect((await request(t.app).get('/api/admin/audit-events')).status).toBe(401);
  const plain = await makeSignedInUser(t);
  const res = await request(t.app).get('/api/admin/audit-events').set('Authorization', plain.bearer);
  expect(res.status).toBe(403);
});

test('GET /api/auth/activity: a user sees their own events (and an admin acting on them), nobody else’s', async () => {
  const me = await makeUser(t);
  const someone = await makeUser(t);
  await request(t.app).post('/api/auth/login').send({ email: me.email, password: 'not-my-password' });
  await request(t.app).post('/api/auth/login').send({ email: someone.email, password: 'not-their-password' });
  const session = await signIn(t, me);
  expect((await request(t.app).put(`/api/users/${me.id}`).set('Authorization', admin.bearer).send({ first_name: 'Renamed' })).status).toBe(
    200,
  );

  const res = await request(t.app).get('/api/auth/activity').set('Authorization', `Bearer ${session.accessToken}`);
  expect(res.status).toBe(200);
  const events = res.body.events as Array<{ type: string; actor: string; ip: string | null }>;
  expect(events.map((e) => [e.type, e.actor])).toEqual([
    ['user.changed', 'other'],
    ['auth.login.succeeded', 'self'],
    ['auth.login.failed', 'system'],
  ]);
  expect(JSON.stringify(res.body)).not.toContain(someone.id);
  expect(JSON.stringify(res.body)).not.toContain(admin.user.id);
  expect((await request(t.app).get('/api/auth/activity')).status).toBe(401);
  expect((await request(t.app).get('/api/auth/activity?limit=0').set('Authorization', `Bearer ${session.accessToken}`)).status).toBe(400);
});

test('the table is append-only: UPDATE, DELETE and TRUNCATE are refused by the database', async () => {
  await makeUser(t).then((u) => request(t.app).post('/api/auth/login').send({ email: u.email, password: 'nope-nope' }));
  await t.ctx.events.idle?.();
  await expect(t.db('audit_events').update({ type: 'tampered' })).rejects.toThrow(/append-only/);
  await expect(t.db('audit_events').delete()).rejects.toThrow(/append-only/);
  await expect(t.db.raw('truncate audit_events')).rejects.toThrow(/append-only/);
  expect(Number((await t.db('audit_events').count<{ count: string }[]>('* as count'))[0]!.count)).toBeGreaterThan(0);
});

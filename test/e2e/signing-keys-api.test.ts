import request from 'supertest';
import { makeSignedInUser } from '../helpers/factories';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * The OpenID Connect signing keys over REST (the console's Signing keys page is built from these): admins read the
 * published keys with their status, never a private half; super_admin rotates, as `npm run admin -- rotate-signing-key`
 * does, audited. And the audit trail's previous page (`before` / `prev_cursor`), which the console's audit log uses.
 */
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

test('GET /api/admin/signing-keys: admins see kid, alg and dates; rotate is super_admin only and audited', async () => {
  const superAdmin = await makeSignedInUser(t, ['super_admin']);
  const admin = await makeSignedInUser(t, ['admin']);
  const plain = await makeSignedInUser(t);
  await request(t.app).get('/api/oauth/jwks');

  const before = await request(t.app).get('/api/admin/signing-keys').set('Authorization', admin.bearer);
  expect(before.status).toBe(200);
  const current = before.body.keys.filter((k: { retired_at: string | null }) => k.retired_at === null);
  expect(current).toHaveLength(1);
  expect(Object.keys(current[0]).sort()).toEqual(['alg', 'created_at', 'kid', 'retired_at']);
  expect(JSON.stringify(before.body)).not.toMatch(/"d"|private|sealed/i);
  expect((await request(t.app).get('/api/admin/signing-keys').set('Authorization', plain.bearer)).status).toBe(403);
  expect((await request(t.app).get('/api/admin/signing-keys')).status).toBe(401);

  expect((await request(t.app).post('/api/admin/signing-keys/rotate').set('Authorization', admin.bearer)).status).toBe(403);
  const rotated = await request(t.app).post('/api/admin/signing-keys/rotate').set('Authorization', superAdmin.bearer);
  expect(rotated.status).toBe(200);
  expect(rotated.headers['cache-control']).toBe('no-store');
  expect(rotated.body.retired).toEqual([current[0].kid]);
  expect(rotated.body.kid).not.toBe(current[0].kid);

  const after = await request(t.app).get('/api/admin/signing-keys').set('Authorization', admin.bearer);
  const byKid = new Map(after.body.keys.map((k: { kid: string; retired_at: string | null }) => [k.kid, k.retired_at]));
  expect(byKid.get(rotated.body.kid)).toBeNull();
  expect(byKid.get(current[0].kid)).toEqual(expect.any(String));
  const jwks = await request(t.app).get('/api/oauth/jwks');
  expect(jwks.body.keys.map((k: { kid: string }) => k.kid)).toEqual(expect.arrayContaining([rotated.body.kid, current[0].kid]));
  await t.ctx.events.idle?.();
  const event = await t.db('audit_events').where({ type: 'oidc.signing_key_rotated', actor_id: superAdmin.user.id }).first();
  expect(event.detail).toMatchObject({ kid: rotated.body.kid, retired: [current[0].kid] });
});

test('GET /api/admin/audit-events: prev_cursor passed as before gives the page before', async () => {
  const admin = await makeSignedInUser(t, ['super_admin']);
  const subject = (await makeSignedInUser(t)).user.id;
  await t
    .db('audit_events')
    .insert(
      Array.from({ length: 5 }, (_, i) => ({ type: 'auth.login.failed', subject_id: subject, detail: { n: i }, occurred_at: new Date() })),
    );
  const get = async (query: Record<string, string>) => {
    const res = await request(t.app)
      .get('/api/admin/audit-events')
      .query({ subject, limit: '2', ...query })
      .set('Authorization', admin.bearer);
    expect(res.status).toBe(200);
    return res.body;
  };
  const first = await get({});
  expect(first.prev_cursor).toBeNull();
  const second = await get({ cursor: first.next_cursor });
  expect(second.prev_cursor).toEqual(expect.any(String));
  const back = await get({ before: second.prev_cursor });
  expect(back.events.map((e: { id: string }) => e.id)).toEqual(first.events.map((e: { id: string }) => e.id));
  const bad = await request(t.app).get('/api/admin/audit-events?before=%25%25').set('Authorization', admin.bearer);
  expect(bad.status).toBe(400);
});

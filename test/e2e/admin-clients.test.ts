import request from 'supertest';
import { sha256Hex } from '../../src/lib/crypto';
import { verifyClientSecret } from '../../src/services/oauth/client-secrets';
import { startSession } from '../../src/services/sessions.service';
import { makeClient, makeSignedInUser, makeUser, signIn } from '../helpers/factories';
import { authorizeParams, authorizePath, basicAuth, obtainCode } from '../helpers/oauth';
import { makeRole } from '../helpers/rbac';
import { createTestApp, type TestApp } from '../helpers/test-app';

let t: TestApp;
let admin: string;

beforeAll(async () => {
  t = await createTestApp();
  admin = (await makeSignedInUser(t, ['admin'])).bearer;
});
afterAll(async () => {
  await t.close();
});

const api = () => request(t.app);
// The spec's fields and CONTRACT §12's (type, token_endpoint_auth_method, grant_types, allowed_resources).
const CLIENT_FIELDS = [
  'allowed_origins',
  'allowed_origins_default',
  'allowed_resources',
  'backchannel_logout_session_required',
  'backchannel_logout_uri',
  'client_id',
  'created_at',
  'dpop_bound_access_tokens',
  'grant_types',
  'is_active',
  'jwks',
  'jwks_uri',
  'name',
  'post_logout_redirect_uris',
  'redirect_uris',
  'registration',
  'require_pushed_authorization_requests',
  'scopes',
  'token_endpoint_auth_method',
  'type',
  'updated_at',
];

async function createClient(body: Record<string, unknown> = {}) {
  const res = await api()
    .post('/api/admin/oauth-clients')
    .set('Authorization', admin)
    .send({ name: 'Portal', redirect_uris: ['https://portal.test/callback'], scopes: 'openid profile email', ...body });
  expect(res.status).toBe(201);
  return res.body as { client: Record<string, unknown> & { client_id: string }; client_secret: string };
}

async function storedHash(clientId: string): Promise<string> {
  return (await t.db('oauth_clients').where({ client_id: clientId }).first()).secret_hash as string;
}

describe('POST /api/admin/oauth-clients', () => {
  test('201 { client, client_secret }: a 256-bit secret, stored only as its SHA-256', async () => {
    const res = await api()
      .post('/api/admin/oauth-clients')
      .set('Authorization', admin)
      .send({
        name: ' Portal ',
        redirect_uris: ['https://portal.test/callback', 'http://localhost:5173/cb'],
        scopes: 'openid profile email',
      });
    expect(res.status).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(Object.keys(res.body).sort()).toEqual(['client', 'client_secret']);
    const { client, client_secret } = res.body;
    expect(Object.keys(client).sort()).toEqual(CLIENT_FIELDS);
    expect(client.registration).toBe('admin');
    expect(client).toMatchObject({
      name: 'Portal',
      redirect_uris: ['https://portal.test/callback', 'http://localhost:5173/cb'],
      scopes: ['openid', 'profile', 'email'],
      is_active: true,
    });
    expect(client.client_id).toMatch(/^client_[A-Za-z0-9_-]+$/);
    expect(Buffer.from(client_secret, 'base64url')).toHaveLength(32);

    const row = await t.db('oauth_clients').where({ client_id: client.client_id }).first();
    expect(row.secret_hash).toBe(sha256Hex(client_secret));
    expect(JSON.stringify(row)).not.toContain(client_secret);
    expect(verifyClientSecret(client_secret, row.secret_hash)).toBe(true);
  });

  test('accepts one redirect_uri and scopes as an array; scopes default to openid profile email', async () => {
    const one = await createClient({ redirect_uris: undefined, redirect_uri: 'https://one.test/cb', scopes: ['email', 'openid', 'email'] });
    expect(one.client.redirect_uris).toEqual(['https://one.test/cb']);
    expect(one.client.scopes).toEqual(['openid', 'email']);
    const both = await createClient({
      redirect_uri: 'https://a.test/cb',
      redirect_uris: ['https://b.test/cb', 'https://a.test/cb'],
      scopes: undefined,
    });
    expect(both.client.redirect_uris).toEqual(['https://a.test/cb', 'https://b.test/cb']);
    expect(both.client.scopes).toEqual(['openid', 'profile', 'email']);
    const inactive = await createClient({ is_active: false });
    expect(inactive.client.is_active).toBe(false);
  });

  test.each([
    ['a fragment', 'https://app.test/cb#frag'],
    ['plain http on a public host', 'http://app.test/cb'],
    ['a relative reference', '/callback'],
    ['javascript:', 'javascript:alert(1)'],
    ['userinfo', 'https://user@app.test/cb'],
    ['userinfo that hides the host', 'https://app.test@evil.test/cb'],
    ['a wildcard', 'https://*.app.test/cb'],
    ['a custom scheme', 'myapp://callback'],
    ['data:', 'data:text/html,hi'],
  ])('a redirect URI with %s -> 400 validation_error, nothing stored', async (_what, uri) => {
    const before = (await t.db('oauth_clients').count<{ count: string }[]>('* as count').first())!.count;
    for (const body of [{ redirect_uri: uri }, { redirect_uris: ['https://ok.test/cb', uri] }]) {
      const res = await api()
        .post('/api/admin/oauth-clients')
        .set('Authorization', admin)
        .send({ name: 'Bad', ...body });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('validation_error');
      expect(res.body.details[0].path).toMatch(/^redirect_uri/);
    }
    expect((await t.db('oauth_clients').count<{ count: string }[]>('* as count').first())!.count).toBe(before);
  });

  test.each([
    [{ name: 'X', scopes: 'openid' }, 'redirect_uris'],
    [{ name: 'X', redirect_uris: [], scopes: 'openid' }, 'redirect_uris'],
    [{ name: 'X', redirect_uri: 'https://a.test/cb', scopes: 'openid offline' }, 'scopes'],
    [{ name: 'X', redirect_uri: 'https://a.test/cb', scopes: ['openid', 'superuser'] }, 'scopes'],
    [{ name: 'X', redirect_uri: 'https://a.test/cb', scopes: '' }, 'scopes'],
    [{ redirect_uri: 'https://a.test/cb' }, 'name'],
    [{ name: '   ', redirect_uri: 'https://a.test/cb' }, 'name'],
  ])('invalid body %j -> 400 on %s', async (body, path) => {
    const res = await api().post('/api/admin/oauth-clients').set('Authorization', admin).send(body);
    expect(res.status).toBe(400);
    expect(res.body.details.map((d: { path: string }) => d.path.split('.')[0])).toContain(path);
  });
});

describe('the secret is shown once', () => {
  test('list and detail carry neither the secret nor its hash', async () => {
    const { client, client_secret } = await createClient();
    const hash = await storedHash(client.client_id);

    const detail = await api().get(`/api/admin/oauth-clients/${client.client_id}`).set('Authorization', admin);
    expect(detail.status).toBe(200);
    expect(Object.keys(detail.body.client).sort()).toEqual(CLIENT_FIELDS);
    expect(detail.body.client).toMatchObject({ client_id: client.client_id, name: 'Portal' });

    const list = await api().get('/api/admin/oauth-clients').set('Authorization', admin);
    expect(list.status).toBe(200);
    expect(list.body.clients.map((c: { client_id: string }) => c.client_id)).toContain(client.client_id);
    for (const c of list.body.clients) expect(Object.keys(c).sort()).toEqual(CLIENT_FIELDS);

    const updated = await api().put(`/api/admin/oauth-clients/${client.client_id}`).set('Authorization', admin).send({ name: 'Renamed' });
    const deactivated = await api().delete(`/api/admin/oauth-clients/${client.client_id}`).set('Authorization', admin);
    for (const res of [detail, list, updated, deactivated]) {
      const text = JSON.stringify(res.body);
      expect(text).not.toContain(client_secret);
      expect(text).not.toContain(hash);
      // No field names a secret; the one value that says "secret" is the auth method's RFC 7591 name.
      expect(text.replace(/"token_endpoint_auth_method":"client_secret_basic"/g, '')).not.toMatch(/secret/i);
    }
  });

  test('unknown client -> 404', async () => {
    for (const [method, path] of [
      ['get', '/api/admin/oauth-clients/client_nope'],
      ['put', '/api/admin/oauth-clients/client_nope'],
      ['post', '/api/admin/oauth-clients/client_nope/rotate-secret'],
      ['delete', '/api/admin/oauth-clients/client_nope'],
    ] as const) {
      const res = await api()[method](path).set('Authorization', admin).send({ name: 'x' });
      expect(res.status).toBe(404);
      expect(res.body.error).toBe('not_found');
    }
  });
});

describe('POST /api/admin/oauth-clients/:clientId/rotate-secret', () => {
  test('returns { client_id, client_secret }; the old secret is dead at once, the new one verifies', async () => {
    const { client, client_secret: oldSecret } = await createClient();
    const res = await api().post(`/api/admin/oauth-clients/${client.client_id}/rotate-secret`).set('Authorization', admin);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(Object.keys(res.body).sort()).toEqual(['client_id', 'client_secret']);
    expect(res.body.client_id).toBe(client.client_id);
    expect(res.body.client_secret).not.toBe(oldSecret);

    const hash = await storedHash(client.client_id);
    expect(verifyClientSecret(oldSecret, hash)).toBe(false);
    expect(verifyClientSecret(res.body.client_secret, hash)).toBe(true);
    expect(hash).toBe(sha256Hex(res.body.client_secret));
  });
});

describe('PUT /api/admin/oauth-clients/:clientId', () => {
  test('updates name, redirect URIs, scopes and active', async () => {
    const { client } = await createClient();
    const res = await api()
      .put(`/api/admin/oauth-clients/${client.client_id}`)
      .set('Authorization', admin)
      .send({ name: 'CRM', redirect_uri: 'https://crm.test/oauth/callback?tenant=1', scopes: 'openid read write' });
    expect(res.status).toBe(200);
    expect(res.body.client).toMatchObject({
      client_id: client.client_id,
      name: 'CRM',
      redirect_uris: ['https://crm.test/oauth/callback?tenant=1'],
      scopes: ['openid', 'read', 'write'],
      is_active: true,
    });
    const row = await t.db('oauth_clients').where({ client_id: client.client_id }).first();
    expect(row.name).toBe('CRM');
    expect(row.redirect_uris).toEqual(['https://crm.test/oauth/callback?tenant=1']);
  });

  test('bad redirect URIs or scopes -> 400, nothing changed; empty body -> 400', async () => {
    const { client } = await createClient();
    for (const body of [{ redirect_uris: ['http://crm.test/cb'] }, { scopes: ['root'] }, {}]) {
      const res = await api().put(`/api/admin/oauth-clients/${client.client_id}`).set('Authorization', admin).send(body);
      expect(res.status).toBe(400);
    }
    const row = await t.db('oauth_clients').where({ client_id: client.client_id }).first();
    expect(row.redirect_uris).toEqual(['https://portal.test/callback']);
  });

  test('is_active=false revokes the sessions of the client; true reactivates', async () => {
    const { client } = await createClient();
    const user = await makeUser(t);
    const tokens = await startSession(t.ctx, t.db, { user, client: { clientId: client.client_id, scope: 'openid' } });
    expect((await api().get('/api/auth/me').set('Authorization', `Bearer ${tokens.accessToken}`)).status).toBe(200);

    const res = await api().put(`/api/admin/oauth-clients/${client.client_id}`).set('Authorization', admin).send({ is_active: false });
    expect(res.body.client.is_active).toBe(false);
    expect((await t.db('sessions').where({ id: tokens.sessionId }).first()).revoked_at).not.toBeNull();
    expect((await api().get('/api/auth/me').set('Authorization', `Bearer ${tokens.accessToken}`)).status).toBe(401);

    const back = await api().put(`/api/admin/oauth-clients/${client.client_id}`).set('Authorization', admin).send({ is_active: true });
    expect(back.body.client.is_active).toBe(true);
  });
});

describe('DELETE /api/admin/oauth-clients/:clientId', () => {
  test('deactivates (row kept) and revokes only that client’s sessions', async () => {
    const { client } = await createClient();
    const other = await makeClient(t);
    const user = await makeUser(t);
    const mine = await startSession(t.ctx, t.db, { user, client: { clientId: client.client_id, scope: 'openid' } });
    const theirs = await startSession(t.ctx, t.db, { user, client: { clientId: other.clientId, scope: 'openid' } });
    const firstParty = await startSession(t.ctx, t.db, { user });

    const res = await api().delete(`/api/admin/oauth-clients/${client.client_id}`).set('Authorization', admin);
    expect(res.status).toBe(200);
    expect(res.body.client).toMatchObject({ client_id: client.client_id, is_active: false });
    expect(await t.db('oauth_clients').where({ client_id: client.client_id }).first()).toMatchObject({ is_active: false });

    const bearer = (tokens: { accessToken: string }) => `Bearer ${tokens.accessToken}`;
    expect((await api().get('/api/auth/me').set('Authorization', bearer(mine))).status).toBe(401);
    expect((await api().get('/api/auth/me').set('Authorization', bearer(theirs))).status).toBe(200);
    expect((await api().get('/api/auth/me').set('Authorization', bearer(firstParty))).status).toBe(200);

    const listed = await api().get('/api/admin/oauth-clients').set('Authorization', admin);
    expect(listed.body.clients.find((c: { client_id: string }) => c.client_id === client.client_id).is_active).toBe(false);
  });
});

describe('deactivation ends what the client was given before it', () => {
  test('a code issued before a deactivation does not work after the re-activation; nor does a pending consent', async () => {
    const client = await makeClient(t);
    const { agent } = await signIn(t, await makeUser(t));
    const { code, verifier, redirectUri } = await obtainCode(agent, client);
    // A consent screen left open: a pending authorization request of the same client (a new user, never consented).
    const { agent: other } = await signIn(t, await makeUser(t));
    const pending = await other.get(authorizePath(authorizeParams(client).params));
    const requestId = new URL(pending.headers.location).searchParams.get('request_id');
    expect(requestId).toBeTruthy();

    await api().delete(`/api/admin/oauth-clients/${client.clientId}`).set('Authorization', admin).expect(200);
    await api().put(`/api/admin/oauth-clients/${client.clientId}`).set('Authorization', admin).send({ is_active: true }).expect(200);

    const exchange = await api()
      .post('/api/oauth/token')
      .set('Authorization', basicAuth(client.clientId, client.clientSecret))
      .type('form')
      .send({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri });
    expect(exchange.status).toBe(400);
    expect(exchange.body.error).toBe('invalid_grant');
    const approve = await other.post('/api/oauth/authorize/approve').send({ request_id: requestId });
    expect(approve.status).toBe(404);
    // The client itself works again: a fresh code exchanges.
    const fresh = await obtainCode(agent, client);
    await api()
      .post('/api/oauth/token')
      .set('Authorization', basicAuth(client.clientId, client.clientSecret))
      .type('form')
      .send({ grant_type: 'authorization_code', code: fresh.code, code_verifier: fresh.verifier, redirect_uri: fresh.redirectUri })
      .expect(200);
  });
});

describe('GET /api/admin/summary', () => {
  let tt: TestApp;
  beforeAll(async () => {
    tt = await createTestApp();
  });
  afterAll(async () => {
    await tt.close();
  });

  test('counts users, clients, roles and admins', async () => {
    const boss = await makeSignedInUser(tt, ['super_admin']);
    await makeUser(tt, { roles: ['manager'] });
    await makeUser(tt, { roles: ['admin'], isActive: false });
    await makeUser(tt);
    await makeClient(tt);
    await makeClient(tt, { isActive: false });
    await makeRole(tt, { application: 'crm' });
    await makeRole(tt, { isActive: false });

    const res = await request(tt.app).get('/api/admin/summary').set('Authorization', boss.bearer);
    expect(res.status).toBe(200);
    // Seeded: super_admin, admin, manager. Admins: active users with an active global admin-tier role.
    expect(res.body).toEqual({ users: 4, active_users: 3, clients: 2, active_clients: 1, roles: 4, admins: 2 });
  });

  test('sign-ins per UTC day: every day of the range, oldest first, counted from the audit trail', async () => {
    const boss = await makeSignedInUser(tt, ['admin']);
    const get = (query: string, bearer = boss.bearer) =>
      request(tt.app).get(`/api/admin/summary/sign-ins${query}`).set('Authorization', bearer);
    const today = tt.clock.now().toISOString().slice(0, 10);
    const before = (await get('?days=7')).body.days[6];
    await signIn(tt, boss.user);
    const refused = await request(tt.app).post('/api/auth/login').send({ email: boss.user.email, password: 'not the password' });
    expect(refused.status).toBe(401);
    await tt.ctx.events.idle?.();

    const week = await get('?days=7');
    expect(week.status).toBe(200);
    expect(week.headers['cache-control']).toContain('no-store');
    const days = week.body.days as Array<{ day: string; succeeded: number; failed: number }>;
    expect(days).toHaveLength(7);
    expect(days[6]).toEqual({ day: today, succeeded: before.succeeded + 1, failed: before.failed + 1 });
    expect(days.slice(0, 6).every((d) => d.succeeded === 0 && d.failed === 0 && d.day < today)).toBe(true);
    expect((await get('')).body.days).toHaveLength(30);
    for (const bad of ['?days=0', '?days=91', '?days=many']) {
      const res = await get(bad);
      expect([bad, res.status, res.body.error]).toEqual([bad, 400, 'validation_error']);
    }
    const manager = await makeSignedInUser(tt, ['manager']);
    expect((await get('', manager.bearer)).status).toBe(403);
  });
});

import request from 'supertest';
import { makeSignedInUser } from '../helpers/factories';
import { csrfFrom } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Browser applications without a restart (docs/apps.md, "Browser applications and CORS"): a client's allowed_origins,
 * set through the admin API or by default from a public client's redirect URIs, open the token, revocation, userinfo
 * and device-authorization endpoints to that origin (never with credentials), and take effect at once.
 */
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

async function createClient(body: Record<string, unknown>) {
  const res = await api()
    .post('/api/admin/oauth-clients')
    .set('Authorization', admin)
    .send({ name: 'Browser app', scopes: 'openid profile', ...body });
  expect(res.status).toBe(201);
  return res.body.client as { client_id: string; allowed_origins: string[]; allowed_origins_default: boolean };
}

const tokenCall = (clientId: string, origin: string) =>
  api()
    .post('/api/oauth/token')
    .set('Origin', origin)
    .type('form')
    .send({
      grant_type: 'authorization_code',
      client_id: clientId,
      code: 'nope',
      code_verifier: 'x'.repeat(43),
      redirect_uri: 'https://x/',
    });

describe('allowed_origins on clients', () => {
  test('a public client defaults to the origins of its redirect URIs; a confidential one to none', async () => {
    const spa = await createClient({
      type: 'public',
      redirect_uris: [
        'http://localhost:5173/callback',
        'http://localhost:5173/silent',
        'https://app.example.com/cb?x=1',
        'com.example.app:/cb',
      ],
    });
    expect(spa.allowed_origins).toEqual(['http://localhost:5173', 'https://app.example.com']);
    expect(spa.allowed_origins_default).toBe(true);
    const web = await createClient({ redirect_uris: ['https://web.example.com/cb'] });
    expect(web.allowed_origins).toEqual([]);
  });

  test('set, shown, reset to the default with null; a bad origin is a 400 naming the field', async () => {
    const spa = await createClient({ type: 'public', redirect_uris: ['https://spa.example.com/cb'] });
    const set = await api()
      .put(`/api/admin/oauth-clients/${spa.client_id}`)
      .set('Authorization', admin)
      .send({ allowed_origins: ['https://other.example.com', 'http://localhost:3000'] });
    expect(set.status).toBe(200);
    expect(set.body.client.allowed_origins).toEqual(['https://other.example.com', 'http://localhost:3000']);
    expect(set.body.client.allowed_origins_default).toBe(false);

    const got = await api().get(`/api/admin/oauth-clients/${spa.client_id}`).set('Authorization', admin);
    expect(got.body.client.allowed_origins).toEqual(['https://other.example.com', 'http://localhost:3000']);

    const reset = await api().put(`/api/admin/oauth-clients/${spa.client_id}`).set('Authorization', admin).send({ allowed_origins: null });
    expect(reset.body.client.allowed_origins).toEqual(['https://spa.example.com']);
    expect(reset.body.client.allowed_origins_default).toBe(true);

    const bad = await api()
      .put(`/api/admin/oauth-clients/${spa.client_id}`)
      .set('Authorization', admin)
      .send({ allowed_origins: ['ftp://files.example.com'] });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('validation_error');
    expect(JSON.stringify(bad.body.details)).toContain('allowed_origins');
  });

  test('changing the redirect URIs of a defaulted public client moves its origins with them', async () => {
    const spa = await createClient({ type: 'public', redirect_uris: ['https://one.example.com/cb'] });
    const moved = await api()
      .put(`/api/admin/oauth-clients/${spa.client_id}`)
      .set('Authorization', admin)
      .send({ redirect_uris: ['https://two.example.com/cb'] });
    expect(moved.body.client.allowed_origins).toEqual(['https://two.example.com']);
    const pre = await api()
      .options('/api/oauth/token')
      .set('Origin', 'https://one.example.com')
      .set('Access-Control-Request-Method', 'POST');
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('client-scoped CORS', () => {
  test('the token endpoint answers CORS, without credentials, for the origin of the client the body names', async () => {
    const spa = await createClient({ type: 'public', redirect_uris: ['https://spa-a.example.com/cb'] });
    const res = await tokenCall(spa.client_id, 'https://spa-a.example.com');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
    expect(res.headers['access-control-allow-origin']).toBe('https://spa-a.example.com');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    expect(res.headers.vary).toMatch(/Origin/);
  });

  test("another client's origin, an unknown client and an inactive client get no CORS headers", async () => {
    const a = await createClient({ type: 'public', redirect_uris: ['https://spa-b.example.com/cb'] });
    const b = await createClient({ type: 'public', redirect_uris: ['https://spa-c.example.com/cb'] });
    expect((await tokenCall(b.client_id, 'https://spa-b.example.com')).headers['access-control-allow-origin']).toBeUndefined();
    expect((await tokenCall('client_unknown', 'https://spa-b.example.com')).headers['access-control-allow-origin']).toBeUndefined();
    await api().put(`/api/admin/oauth-clients/${a.client_id}`).set('Authorization', admin).send({ is_active: false });
    expect((await tokenCall(a.client_id, 'https://spa-b.example.com')).headers['access-control-allow-origin']).toBeUndefined();
    const pre = await api()
      .options('/api/oauth/token')
      .set('Origin', 'https://spa-b.example.com')
      .set('Access-Control-Request-Method', 'POST');
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
  });

  test('a preflight is answered for any registered origin, at once after the client is created (no restart)', async () => {
    const before = await api()
      .options('/api/oauth/token')
      .set('Origin', 'https://spa-d.example.com')
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'content-type');
    expect(before.status).toBe(204);
    expect(before.headers['access-control-allow-origin']).toBeUndefined();
    await createClient({ type: 'public', redirect_uris: ['https://spa-d.example.com/cb'] });
    for (const path of [
      '/api/oauth/token',
      '/api/oauth/revoke',
      '/api/oauth/userinfo',
      '/api/oauth/device_authorization',
      '/api/oauth/par',
    ]) {
      const pre = await api()
        .options(path)
        .set('Origin', 'https://spa-d.example.com')
        .set('Access-Control-Request-Method', 'POST')
        .set('Access-Control-Request-Headers', 'authorization, content-type');
      expect(pre.status).toBe(204);
      expect(pre.headers['access-control-allow-origin']).toBe('https://spa-d.example.com');
      expect(pre.headers['access-control-allow-methods']).toContain('POST');
      expect(pre.headers['access-control-allow-headers']).toMatch(/Authorization/);
      expect(pre.headers['access-control-allow-credentials']).toBeUndefined();
    }
  });

  test('revocation and device authorization answer the named client; userinfo the client of the Bearer token', async () => {
    const spa = await createClient({
      type: 'public',
      redirect_uris: ['https://spa-e.example.com/cb'],
      grant_types: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
    });
    const origin = 'https://spa-e.example.com';
    const revoke = await api().post('/api/oauth/revoke').set('Origin', origin).type('form').send({ client_id: spa.client_id, token: 'x' });
    expect(revoke.status).toBe(200);
    expect(revoke.headers['access-control-allow-origin']).toBe(origin);
    const device = await api()
      .post('/api/oauth/device_authorization')
      .set('Origin', origin)
      .type('form')
      .send({ client_id: spa.client_id, scope: 'openid' });
    expect(device.status).toBe(200);
    expect(device.headers['access-control-allow-origin']).toBe(origin);
    // Pushed authorization requests (RFC 9126) from the app's origin: the request_uri is readable by the app.
    const par = await api().post('/api/oauth/par').set('Origin', origin).type('form').send({
      client_id: spa.client_id,
      response_type: 'code',
      redirect_uri: 'https://spa-e.example.com/cb',
      scope: 'openid',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
    expect(par.status).toBe(201);
    expect(par.body.request_uri).toMatch(/^urn:ietf:params:oauth:request_uri:/);
    expect(par.headers['access-control-allow-origin']).toBe(origin);
    expect(par.headers['access-control-allow-credentials']).toBeUndefined();
    const otherOrigin = await api()
      .post('/api/oauth/par')
      .set('Origin', 'https://elsewhere.example.com')
      .type('form')
      .send({ client_id: spa.client_id, response_type: 'code', redirect_uri: 'https://spa-e.example.com/cb', scope: 'openid' });
    expect(otherOrigin.headers['access-control-allow-origin']).toBeUndefined();

    // A token naming the client (signature not checked for the CORS choice: an invalid token still gets its 401,
    // readable by the app, so that it can refresh).
    const fake = `${Buffer.from('{"alg":"HS256"}').toString('base64url')}.${Buffer.from(JSON.stringify({ client_id: spa.client_id })).toString('base64url')}.x`;
    const info = await api().get('/api/oauth/userinfo').set('Origin', origin).set('Authorization', `Bearer ${fake}`);
    expect(info.status).toBe(401);
    expect(info.headers['access-control-allow-origin']).toBe(origin);
    expect(info.headers['access-control-expose-headers']).toMatch(/WWW-Authenticate/);
  });

  test('the global allowed_origins (here pinned to https://portal.test) opens these endpoints too, still without credentials', async () => {
    const res = await tokenCall('client_unknown', 'https://portal.test');
    expect(res.status).toBe(401);
    expect(res.headers['access-control-allow-origin']).toBe('https://portal.test');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    // The rest of /api keeps its credentialed CORS for the global list.
    const me = await api().get('/api/auth/me').set('Origin', 'https://portal.test');
    expect(me.headers['access-control-allow-credentials']).toBe('true');
  });
});

describe('dynamic registration', () => {
  test('allowed_origins may be sent; the default is the redirect URIs’ origins', async () => {
    const open = await createTestApp({ env: { CLIENT_REGISTRATION: 'open' } });
    try {
      const res = await request(open.app)
        .post('/api/oauth/register')
        .send({ redirect_uris: ['https://dyn.example.com/cb'], token_endpoint_auth_method: 'none', client_name: 'Dyn' });
      expect(res.status).toBe(201);
      expect(res.body.allowed_origins).toEqual(['https://dyn.example.com']);
      const set = await request(open.app)
        .post('/api/oauth/register')
        .send({
          redirect_uris: ['https://dyn.example.com/cb'],
          token_endpoint_auth_method: 'none',
          allowed_origins: ['https://ui.example.com'],
        });
      expect(set.body.allowed_origins).toEqual(['https://ui.example.com']);
      const pre = await request(open.app)
        .options('/api/oauth/token')
        .set('Origin', 'https://ui.example.com')
        .set('Access-Control-Request-Method', 'POST');
      expect(pre.headers['access-control-allow-origin']).toBe('https://ui.example.com');
    } finally {
      await open.close();
    }
  });
});

describe('the console application form', () => {
  test("sets, shows (en/de) and clears a client's allowed origins; a bad one is refused beside the field", async () => {
    const s = await makeSignedInUser(t, ['super_admin']);
    const csrf = await csrfFrom(s.agent, '/admin/applications/new?preset=custom');
    const form = await s.agent.get('/admin/applications/new?preset=custom');
    expect(form.text).toContain('Allowed browser origins (CORS)');
    const fields = {
      csrf,
      name: 'Console SPA origins',
      type: 'public',
      grant_types: ['authorization_code', 'refresh_token'],
      redirect_uris: 'http://localhost:5173/callback',
      post_logout_redirect_uris: '',
      scopes: ['openid'],
    };
    const created = await s.agent
      .post('/admin/applications')
      .type('form')
      .send({ ...fields, allowed_origins: '' });
    expect(created.status).toBe(201);
    const clientId = /id="client-id">([^<]+)</.exec(created.text)![1]!;
    const viaApi = async () =>
      (await api().get(`/api/admin/oauth-clients/${clientId}`).set('Authorization', admin)).body.client as Record<string, unknown>;
    expect(await viaApi()).toMatchObject({ allowed_origins: ['http://localhost:5173'], allowed_origins_default: true });
    const detail = await s.agent.get(`/admin/applications/${clientId}`);
    expect(detail.text).toContain('http://localhost:5173 (from the redirect URIs)');

    const saved = await s.agent
      .post(`/admin/applications/${clientId}`)
      .type('form')
      .send({ ...fields, allowed_origins: 'https://app.example.com\nhttp://localhost:3000' });
    expect(saved.status).toBe(303);
    expect(await viaApi()).toMatchObject({
      allowed_origins: ['https://app.example.com', 'http://localhost:3000'],
      allowed_origins_default: false,
    });
    const pre = await api().options('/api/oauth/token').set('Origin', 'http://localhost:3000').set('Access-Control-Request-Method', 'POST');
    expect(pre.headers['access-control-allow-origin']).toBe('http://localhost:3000');

    const refused = await s.agent
      .post(`/admin/applications/${clientId}`)
      .type('form')
      .send({ ...fields, allowed_origins: 'javascript:alert(1)' });
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(/id="f-allowed_origins-error">[^<]*is not an http\(s\) origin/);
    expect(refused.text).toContain('javascript:alert(1)</textarea>');

    const cleared = await s.agent
      .post(`/admin/applications/${clientId}`)
      .type('form')
      .send({ ...fields, allowed_origins: '' });
    expect(cleared.status).toBe(303);
    expect(await viaApi()).toMatchObject({ allowed_origins: ['http://localhost:5173'], allowed_origins_default: true });

    const german = await s.agent.get(`/admin/applications/${clientId}`).set('Accept-Language', 'de');
    expect(german.text).toContain('Erlaubte Browser-Origins (CORS)');
    expect(german.text).toContain('(aus den Weiterleitungs-URIs)');
  });
});

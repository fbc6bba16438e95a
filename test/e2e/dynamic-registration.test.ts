import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { createApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { sha256Hex } from '../../src/lib/crypto';
import { closeServiceContext, createServiceContext } from '../../src/create-context';
import { pruneExpired } from '../../src/services/prune.service';
import { csrfOf, makeApiResource } from '../helpers/apps';
import { makeClient, makeSignedInUser, makeUser, signIn } from '../helpers/factories';
import { authorizePath, authorizeParams, obtainCode } from '../helpers/oauth';
import { refuseAuditRows } from '../helpers/audit';
import { createCapturingMailer, createTestApp, TEST_ENV, type TestApp } from '../helpers/test-app';

/**
 * CONTRACT §13: dynamic client registration (RFC 7591) and management (RFC 7592) under CLIENT_REGISTRATION off, token
 * and open; what a registered client may then do; and the abuse limits (per-IP budget, 30-day expiry).
 */

const DAY = 24 * 3600;
const LOOPBACK = 'http://127.0.0.1/callback';

type Agent = ReturnType<typeof request>;

function register(t: TestApp, body: unknown, initialAccessToken?: string) {
  const req = request(t.app).post('/api/oauth/register');
  if (initialAccessToken !== undefined) req.set('Authorization', `Bearer ${initialAccessToken}`);
  return req.send(body as object);
}

function manage(t: TestApp, method: 'get' | 'put' | 'delete', uri: string, token?: string): ReturnType<Agent['get']> {
  const path = new URL(uri).pathname;
  const req = request(t.app)[method](path);
  return token === undefined ? req : req.set('Authorization', `Bearer ${token}`);
}

async function auditTypes(t: TestApp, clientId: string): Promise<string[]> {
  return (await t.db('audit_events').where({ client_id: clientId }).orderBy('id')).map((r: { type: string }) => r.type);
}

/** A public client's token request: client_id alone (CONTRACT §12). */
function exchangeAsPublic(t: TestApp, clientId: string, input: { code: string; verifier: string; redirectUri: string; resource?: string }) {
  return request(t.app)
    .post('/api/oauth/token')
    .type('form')
    .send({
      grant_type: 'authorization_code',
      client_id: clientId,
      code: input.code,
      code_verifier: input.verifier,
      redirect_uri: input.redirectUri,
      ...(input.resource ? { resource: input.resource } : {}),
    });
}

describe('CLIENT_REGISTRATION=off (the default)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  test('the endpoints answer 404 in the OAuth dialect, whatever the body, and nothing is created', async () => {
    for (const body of [{ redirect_uris: [LOOPBACK], token_endpoint_auth_method: 'none' }, { redirect_uris: 'not-a-list' }]) {
      const res = await register(t, body);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({
        error: 'invalid_request',
        error_description: 'Dynamic client registration is not enabled on this server',
      });
    }
    const client = await makeClient(t);
    expect((await manage(t, 'get', `http://sso.test/api/oauth/register/${client.clientId}`, 'anything')).status).toBe(404);
    expect(await t.db('oauth_clients').where({ registration: 'dynamic' }).count('* as n')).toEqual([{ n: '0' }]);
  });

  test('neither discovery document lists a registration_endpoint', async () => {
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const res = await request(t.app).get(path);
      expect(res.status).toBe(200);
      expect(res.body).not.toHaveProperty('registration_endpoint');
    }
  });
});

describe('CLIENT_REGISTRATION=token', () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await createTestApp({ env: { CLIENT_REGISTRATION: 'token' } });
    admin = (await makeSignedInUser(t, ['admin'])).bearer;
  });
  afterAll(async () => {
    await t.close();
  });

  async function mint(body: Record<string, unknown> = {}): Promise<{ token: string; id: string }> {
    const res = await request(t.app).post('/api/admin/registration-tokens').set('Authorization', admin).send(body);
    expect(res.status).toBe(201);
    return { token: res.body.token, id: res.body.registration_token.id };
  }

  const metadata = { client_name: 'CI bot', redirect_uris: ['https://bot.example.com/cb'], token_endpoint_auth_method: 'none' };

  test('both discovery documents list registration_endpoint', async () => {
    for (const path of ['/.well-known/oauth-authorization-server', '/api/oauth/.well-known/openid-configuration']) {
      expect((await request(t.app).get(path)).body.registration_endpoint).toBe('http://sso.test/api/oauth/register');
    }
  });

  test('an admin mints an initial access token: shown once, stored as its SHA-256, listed without it, audited', async () => {
    const res = await request(t.app)
      .post('/api/admin/registration-tokens')
      .set('Authorization', admin)
      .send({ expires_in_s: 600, max_uses: 3 });
    expect(res.status).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body.token).toMatch(/^sso_iat_[A-Za-z0-9_-]{43}$/);
    expect(res.body.registration_token).toMatchObject({ max_uses: 3, uses: 0, revoked_at: null });
    const expiresIn = (Date.parse(res.body.registration_token.expires_at) - Date.parse(res.body.registration_token.created_at)) / 1000;
    expect(expiresIn).toBe(600);
    const row = await t.db('registration_tokens').where({ id: res.body.registration_token.id }).first();
    expect(row.token_hash).toBe(sha256Hex(res.body.token));
    const list = await request(t.app).get('/api/admin/registration-tokens').set('Authorization', admin);
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).not.toContain(res.body.token);
    expect(JSON.stringify(list.body)).not.toContain(row.token_hash);
    expect(list.body.registration_tokens.map((r: { id: string }) => r.id)).toContain(res.body.registration_token.id);
    const event = await t.db('audit_events').where({ type: 'oauth.registration_token.created', subject_id: row.id }).first();
    expect(event).toBeDefined();
    expect(JSON.stringify(event)).not.toContain(res.body.token);
  });

  test('minting needs oauth_clients:write and refuses out-of-range limits', async () => {
    const plain = (await makeSignedInUser(t)).bearer;
    expect((await request(t.app).post('/api/admin/registration-tokens').set('Authorization', plain).send({})).status).toBe(403);
    expect((await request(t.app).post('/api/admin/registration-tokens').send({})).status).toBe(401);
    for (const body of [{ max_uses: 0 }, { expires_in_s: 10 }, { expires_in_s: 'soon' }, { max_uses: 1.5 }]) {
      const res = await request(t.app).post('/api/admin/registration-tokens').set('Authorization', admin).send(body);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('validation_error');
    }
  });

  test('without a token: 401 invalid_token with a bare Bearer challenge', async () => {
    const res = await register(t, metadata);
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_token');
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(res.headers['cache-control']).toBe('no-store');
  });

  test('an unknown, expired, used-up or revoked token: 401 invalid_token, nothing registered', async () => {
    const before = await t.db('oauth_clients').count('* as n');
    const wrong = await register(t, metadata, 'sso_iat_not-a-real-token');
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe('invalid_token');
    expect(wrong.headers['www-authenticate']).toBe('Bearer error="invalid_token"');

    const expiring = await mint({ expires_in_s: 60 });
    t.clock.advance(61);
    expect((await register(t, metadata, expiring.token)).status).toBe(401);

    const once = await mint({ max_uses: 1 });
    expect((await register(t, metadata, once.token)).status).toBe(201);
    const again = await register(t, metadata, once.token);
    expect(again.status).toBe(401);
    expect(again.body.error).toBe('invalid_token');

    const revoked = await mint({ max_uses: 5 });
    const revoke = await request(t.app).delete(`/api/admin/registration-tokens/${revoked.id}`).set('Authorization', admin);
    expect(revoke.status).toBe(200);
    expect(revoke.body.registration_token.revoked_at).not.toBeNull();
    expect((await register(t, metadata, revoked.token)).status).toBe(401);
    expect(await t.db('audit_events').where({ type: 'oauth.registration_token.revoked', subject_id: revoked.id }).first()).toBeDefined();

    const after = await t.db('oauth_clients').count('* as n');
    expect(Number(after[0]!.n) - Number(before[0]!.n)).toBe(1);
  });

  test('a refused registration spends no use of the token', async () => {
    const { token, id } = await mint({ max_uses: 1 });
    const bad = await register(t, { ...metadata, redirect_uris: ['https://bot.example.com/cb#frag'] }, token);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('invalid_redirect_uri');
    const refusedByPolicy = await register(t, { ...metadata, grant_types: ['client_credentials'] }, token);
    expect(refusedByPolicy.status).toBe(400);
    expect(refusedByPolicy.body.error).toBe('invalid_client_metadata');
    expect((await t.db('registration_tokens').where({ id }).first()).uses).toBe(0);
    expect((await register(t, metadata, token)).status).toBe(201);
  });

  test('concurrent registrations beyond the use limit: exactly max_uses clients are created', async () => {
    const { token, id } = await mint({ max_uses: 3 });
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => register(t, { ...metadata, client_name: `Burst ${i}` }, token)));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 201, 401, 401, 401, 401, 401, 401, 401]);
    expect((await t.db('registration_tokens').where({ id }).first()).uses).toBe(3);
    expect(await t.db('oauth_clients').where('name', 'like', 'Burst %').count('* as n')).toEqual([{ n: '3' }]);
  });

  test('audit rows are written in the transaction: when the row cannot be written, nothing is registered and no use is spent', async () => {
    const { token, id } = await mint({ max_uses: 1 });
    const allow = await refuseAuditRows(t, 'oauth.client.registered');
    try {
      const res = await register(t, { ...metadata, client_name: 'Unrecorded' }, token);
      expect(res.status).toBeGreaterThanOrEqual(500);
    } finally {
      await allow();
    }
    expect(await t.db('oauth_clients').where({ name: 'Unrecorded' }).first()).toBeUndefined();
    expect((await t.db('registration_tokens').where({ id }).first()).uses).toBe(0);
    expect((await register(t, { ...metadata, client_name: 'Unrecorded' }, token)).status).toBe(201);
  });

  test('a confidential client gets a working secret (client_secret_expires_at 0); the registration is audited with its token', async () => {
    const { token, id } = await mint();
    const res = await register(
      t,
      { client_name: 'Backend', redirect_uris: ['https://backend.example.com/cb'], token_endpoint_auth_method: 'client_secret_basic' },
      token,
    );
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      client_name: 'Backend',
      token_endpoint_auth_method: 'client_secret_basic',
      client_secret_expires_at: 0,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      scope: 'openid profile email',
    });
    const row = await t.db('oauth_clients').where({ client_id: res.body.client_id }).first();
    expect(row.secret_hash).toBe(sha256Hex(res.body.client_secret));
    expect(row.registration_access_token_hash).toBe(sha256Hex(res.body.registration_access_token));
    // Confidential clients may introspect: the secret authenticates.
    const introspect = await request(t.app)
      .post('/api/oauth/introspect')
      .auth(res.body.client_id, res.body.client_secret)
      .type('form')
      .send({ token: 'nothing' });
    expect(introspect.status).toBe(200);
    expect(introspect.body).toEqual({ active: false });
    const event = await t.db('audit_events').where({ type: 'oauth.client.registered', client_id: res.body.client_id }).first();
    expect(event.detail).toMatchObject({ mode: 'token', type: 'confidential', initial_access_id: id, name: 'Backend' });
  });

  test('the admin rules of CONTRACT §12 hold: private-use schemes for public clients only, scopes of the catalogue', async () => {
    const native = await register(
      t,
      { client_name: 'Desktop', redirect_uris: ['com.example.desktop:/cb'], token_endpoint_auth_method: 'none', scope: 'openid read' },
      (await mint()).token,
    );
    expect(native.status).toBe(201);
    expect(native.body.scope).toBe('openid read');
    const confidentialNative = await register(
      t,
      { client_name: 'Desktop', redirect_uris: ['com.example.desktop:/cb'], token_endpoint_auth_method: 'client_secret_post' },
      (await mint()).token,
    );
    expect(confidentialNative.status).toBe(400);
    expect(confidentialNative.body.error).toBe('invalid_redirect_uri');
    const unknownScope = await register(t, { ...metadata, scope: 'openid superpowers' }, (await mint()).token);
    expect(unknownScope.status).toBe(400);
    expect(unknownScope.body).toEqual({
      error: 'invalid_client_metadata',
      error_description: 'scope superpowers is not available to dynamic registration',
    });
  });
  test('update (RFC 7592) of a client registered with an initial access token is judged by the token rules', async () => {
    const reg = await register(t, metadata, (await mint()).token);
    expect(reg.status).toBe(201);
    const res = await request(t.app)
      .put(new URL(reg.body.registration_client_uri).pathname)
      .set('Authorization', `Bearer ${reg.body.registration_access_token}`)
      .send({
        ...metadata,
        redirect_uris: ['https://bot.example.com/cb', 'com.example.bot:/cb'],
        grant_types: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
        scope: 'openid read',
      });
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('openid read');
    expect(res.body.grant_types).toContain('urn:ietf:params:oauth:grant-type:device_code');
  });

  test('a self-registered device client: the /device page carries the same warning', async () => {
    const reg = await register(
      t,
      { client_name: 'Smart TV', token_endpoint_auth_method: 'none', grant_types: ['urn:ietf:params:oauth:grant-type:device_code'] },
      (await mint()).token,
    );
    expect(reg.status).toBe(201);
    const started = await request(t.app)
      .post('/api/oauth/device_authorization')
      .type('form')
      .send({ client_id: reg.body.client_id, scope: 'openid' });
    expect(started.status).toBe(200);
    const { agent } = await signIn(t, await makeUser(t));
    const entry = await agent.get('/device');
    const confirm = await agent
      .post('/device')
      .type('form')
      .send({ user_code: started.body.user_code, csrf: csrfOf(entry.text) });
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain('Smart TV');
    expect(confirm.text).toContain('id="unreviewed-app"');
    expect(confirm.text).toContain('No administrator has reviewed this app');
  });
});

describe('CLIENT_REGISTRATION=open', () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    // ALLOW_HTTP_REDIRECT_URIS is for administrators: an open registration never gets plain http off loopback.
    t = await createTestApp({ env: { CLIENT_REGISTRATION: 'open', ALLOW_HTTP_REDIRECT_URIS: 'true' } });
    admin = (await makeSignedInUser(t, ['admin'])).bearer;
  });
  afterAll(async () => {
    await t.close();
  });

  const mcpClient = {
    client_name: 'Claude Code (my laptop)',
    redirect_uris: [LOOPBACK],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    scope: 'openid profile',
    client_uri: 'https://claude.ai',
    logo_uri: 'https://claude.ai/logo.png',
    software_id: 'ignored-unknown-member',
  };

  test('a public client registers without any token: RFC 7591 §3.2.1 answer, stored as a dynamic public client', async () => {
    const res = await register(t, mcpClient);
    expect(res.status).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({
      client_id: expect.stringMatching(/^client_/),
      client_id_issued_at: expect.any(Number),
      registration_access_token: expect.any(String),
      registration_client_uri: `http://sso.test/api/oauth/register/${res.body.client_id}`,
      client_name: 'Claude Code (my laptop)',
      redirect_uris: [LOOPBACK],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      scope: 'openid profile',
      client_uri: 'https://claude.ai',
      logo_uri: 'https://claude.ai/logo.png',
      // The origin of its loopback redirect URI: a public client's default browser origin (docs/apps.md).
      allowed_origins: ['http://127.0.0.1'],
    });
    expect(Math.abs(res.body.client_id_issued_at - Date.now() / 1000)).toBeLessThan(60);
    const detail = await request(t.app).get(`/api/admin/oauth-clients/${res.body.client_id}`).set('Authorization', admin);
    expect(detail.body.client).toMatchObject({ registration: 'dynamic', type: 'public', name: 'Claude Code (my laptop)', is_active: true });
    expect(await auditTypes(t, res.body.client_id)).toEqual(['oauth.client.registered']);
  });

  test('token_endpoint_auth_method omitted: a public client; admins list dynamic clients with ?registration=dynamic', async () => {
    const res = await register(t, { client_name: 'Omitted', redirect_uris: ['https://app.example.com/cb'] });
    expect(res.status).toBe(201);
    expect(res.body.token_endpoint_auth_method).toBe('none');
    expect(res.body).not.toHaveProperty('client_secret');
    const byAdmin = await makeClient(t, { name: 'Admin-made' });
    const dynamic = await request(t.app).get('/api/admin/oauth-clients?registration=dynamic').set('Authorization', admin);
    const ids = dynamic.body.clients.map((c: { client_id: string }) => c.client_id);
    expect(ids).toContain(res.body.client_id);
    expect(ids).not.toContain(byAdmin.clientId);
    expect(dynamic.body.clients.every((c: { registration: string }) => c.registration === 'dynamic')).toBe(true);
    const all = await request(t.app).get('/api/admin/oauth-clients').set('Authorization', admin);
    expect(all.body.clients.find((c: { client_id: string }) => c.client_id === byAdmin.clientId).registration).toBe('admin');
    expect((await request(t.app).get('/api/admin/oauth-clients?registration=other').set('Authorization', admin)).status).toBe(400);
    // The console's Applications page says who registered each client.
    const { agent } = await makeSignedInUser(t, ['admin']);
    const page = await agent.get('/admin/applications');
    expect(page.status).toBe(200);
    expect(page.text).toContain(' · self-registered');
    const detailPage = await agent.get(`/admin/applications/${res.body.client_id}`);
    expect(detailPage.text).toContain('Dynamically (RFC 7591), not reviewed by an administrator');
  });

  test.each([
    ['a confidential client', { token_endpoint_auth_method: 'client_secret_basic' }, 'invalid_client_metadata', /public clients only/],
    ['client_secret_post', { token_endpoint_auth_method: 'client_secret_post' }, 'invalid_client_metadata', /public clients only/],
    ['private_key_jwt', { token_endpoint_auth_method: 'private_key_jwt' }, 'invalid_client_metadata', /token_endpoint_auth_method/],
    ['plain http off loopback', { redirect_uris: ['http://app.example.com/cb'] }, 'invalid_redirect_uri', /https/],
    ['a private-use scheme', { redirect_uris: ['com.example.app:/cb'] }, 'invalid_redirect_uri', /https/],
    ['a fragment', { redirect_uris: ['https://app.example.com/cb#x'] }, 'invalid_redirect_uri', /^redirect_uris\.0: .*fragment/],
    ['userinfo', { redirect_uris: ['https://good.example@evil.example/cb'] }, 'invalid_redirect_uri', /user information/],
    ['no redirect URI', { redirect_uris: [] }, 'invalid_redirect_uri', /at least one redirect URI/],
    ['the admin scope', { scope: 'openid admin' }, 'invalid_client_metadata', /scope admin is not available to open registration/],
    ['the read scope', { scope: 'read' }, 'invalid_client_metadata', /scope read/],
    ['client_credentials', { grant_types: ['client_credentials'] }, 'invalid_client_metadata', /client_credentials/],
    [
      'the device grant',
      { grant_types: ['urn:ietf:params:oauth:grant-type:device_code'] },
      'invalid_client_metadata',
      /not available to open registration/,
    ],
    ['an implicit response type', { response_types: ['token'] }, 'invalid_client_metadata', /^response_types\.0: /],
    ['a two-line name', { client_name: 'Good app\nSign in at evil.example' }, 'invalid_client_metadata', /one line/],
    ['a 101-character name', { client_name: 'x'.repeat(101) }, 'invalid_client_metadata', /too long/],
    ['an http logo', { logo_uri: 'http://claude.ai/logo.png' }, 'invalid_client_metadata', /^logo_uri: logo_uri must be an https URL$/],
    ['a javascript: client_uri', { client_uri: 'javascript:alert(1)' }, 'invalid_client_metadata', /client_uri must be an https URL/],
    ['a scope that is not a string', { scope: ['openid'] }, 'invalid_client_metadata', /^scope: /],
  ])('%s is refused (400 %s)', async (_what, change, error, description) => {
    const before = await t.db('oauth_clients').count('* as n');
    const res = await register(t, { ...mcpClient, ...change });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(error);
    expect(res.body.error_description).toMatch(description);
    expect(await t.db('oauth_clients').count('* as n')).toEqual(before);
  });

  test('a body that is not a JSON object is invalid_client_metadata, never a 5xx', async () => {
    const res = await request(t.app).post('/api/oauth/register').set('Content-Type', 'application/json').send('[1,2]');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_client_metadata');
    const broken = await request(t.app).post('/api/oauth/register').set('Content-Type', 'application/json').send('{"redirect_uris":');
    expect(broken.status).toBe(400);
    expect(broken.body.error).toBe('invalid_request');
  });

  test('scopes of APIs marked open_registration may be named, and tokens for those APIs asked; other APIs stay closed', async () => {
    const open = await makeApiResource(t, { identifier: 'https://mcp.example.com/', scopes: ['mcp:tools'] });
    await t.db('api_resources').where({ id: open.id }).update({ open_registration: true });
    const closed = await makeApiResource(t, { identifier: 'https://payroll.example.com/', scopes: ['payroll:read'] });

    const refused = await register(t, { ...mcpClient, scope: 'openid payroll:read' });
    expect(refused.status).toBe(400);
    expect(refused.body.error_description).toBe('scope payroll:read is not available to open registration');

    const res = await register(t, { ...mcpClient, scope: 'openid mcp:tools' });
    expect(res.status).toBe(201);
    expect(res.body.scope).toBe('openid');
    const client = { clientId: res.body.client_id, redirectUris: [LOOPBACK] };

    const { agent } = await signIn(t, await makeUser(t));
    const { code, verifier, redirectUri } = await obtainCode(agent, client, { scope: 'openid mcp:tools', resource: open.identifier });
    const tokens = await exchangeAsPublic(t, client.clientId, { code, verifier, redirectUri, resource: open.identifier });
    expect(tokens.status).toBe(200);
    expect(tokens.body.scope).toBe('openid mcp:tools');
    const claims = JSON.parse(Buffer.from(tokens.body.access_token.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({ aud: open.identifier, client_id: client.clientId, scope: 'openid mcp:tools' });

    // The refresh keeps the API's scope (the grantable scopes of a dynamic client include open APIs').
    const refreshed = await request(t.app).post('/api/oauth/token').type('form').send({
      grant_type: 'refresh_token',
      client_id: client.clientId,
      refresh_token: tokens.body.refresh_token,
      resource: open.identifier,
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.scope).toBe('openid mcp:tools');

    const other = await agent.get(authorizePath(authorizeParams(client, { scope: 'openid', resource: closed.identifier }).params));
    expect(other.status).toBe(302);
    expect(new URL(other.headers.location).searchParams.get('error')).toBe('invalid_target');

    // Clearing the mark takes the API away from self-registered clients at once.
    await t.db('api_resources').where({ id: open.id }).update({ open_registration: false });
    const after = await agent.get(authorizePath(authorizeParams(client, { scope: 'openid', resource: open.identifier }).params));
    expect(new URL(after.headers.location).searchParams.get('error')).toBe('invalid_target');
  });

  describe('RFC 7592 management with the registration access token', () => {
    async function registered() {
      const res = await register(t, mcpClient);
      expect(res.status).toBe(201);
      return res.body as { client_id: string; registration_access_token: string; registration_client_uri: string };
    }

    test('read: the registration as stored, the token echoed; no caching', async () => {
      const reg = await registered();
      const res = await manage(t, 'get', reg.registration_client_uri, reg.registration_access_token);
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).toMatchObject({
        client_id: reg.client_id,
        client_name: mcpClient.client_name,
        registration_access_token: reg.registration_access_token,
        registration_client_uri: reg.registration_client_uri,
        token_endpoint_auth_method: 'none',
      });
    });

    test('a missing, wrong or other client’s token, and an admin-created client: 401 invalid_token', async () => {
      const a = await registered();
      const b = await registered();
      const missing = await manage(t, 'get', a.registration_client_uri);
      expect(missing.status).toBe(401);
      expect(missing.headers['www-authenticate']).toBe('Bearer');
      for (const [uri, token] of [
        [a.registration_client_uri, 'wrong'],
        [a.registration_client_uri, b.registration_access_token],
        [`http://sso.test/api/oauth/register/${(await makeClient(t)).clientId}`, a.registration_access_token],
        [`http://sso.test/api/oauth/register/client_unknown`, a.registration_access_token],
        [`http://sso.test/api/oauth/register/${'x'.repeat(300)}`, a.registration_access_token],
      ]) {
        for (const method of ['get', 'put', 'delete'] as const) {
          const res = await manage(t, method, uri!, token).send(method === 'put' ? mcpClient : undefined);
          expect([method, res.status, res.body.error]).toEqual([method, 401, 'invalid_token']);
          expect(res.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
        }
      }
      expect((await manage(t, 'get', a.registration_client_uri, a.registration_access_token)).status).toBe(200);
    });

    test('update replaces the metadata under the same rules, audited in its transaction', async () => {
      const reg = await registered();
      const res = await manage(t, 'put', reg.registration_client_uri, reg.registration_access_token).send({
        client_id: reg.client_id,
        client_name: 'Renamed agent',
        redirect_uris: ['http://127.0.0.1/cb2', 'https://agent.example.com/cb'],
        token_endpoint_auth_method: 'none',
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        client_name: 'Renamed agent',
        redirect_uris: ['http://127.0.0.1/cb2', 'https://agent.example.com/cb'],
        scope: 'openid profile email',
        registration_access_token: reg.registration_access_token,
      });
      expect(res.body).not.toHaveProperty('logo_uri');
      const read = await manage(t, 'get', reg.registration_client_uri, reg.registration_access_token);
      expect(read.body.client_name).toBe('Renamed agent');
      expect(await auditTypes(t, reg.client_id)).toEqual(['oauth.client.registered', 'oauth.client.changed']);
      const changed = await t.db('audit_events').where({ client_id: reg.client_id, type: 'oauth.client.changed' }).first();
      expect(changed.detail.via).toBe('registration');

      const cases: Array<[Record<string, unknown>, string, RegExp]> = [
        [{ ...mcpClient, client_id: 'client_other' }, 'invalid_client_metadata', /client_id does not match/],
        [{ ...mcpClient, token_endpoint_auth_method: 'client_secret_basic' }, 'invalid_client_metadata', /cannot change/],
        [{ ...mcpClient, redirect_uris: ['http://evil.example/cb'] }, 'invalid_redirect_uri', /https/],
        [{ ...mcpClient, client_secret: 'guess' }, 'invalid_client_metadata', /client_secret does not match/],
      ];
      for (const [body, error, description] of cases) {
        const refused = await manage(t, 'put', reg.registration_client_uri, reg.registration_access_token).send(body);
        expect([refused.status, refused.body.error]).toEqual([400, error]);
        expect(refused.body.error_description).toMatch(description);
      }
      expect((await manage(t, 'get', reg.registration_client_uri, reg.registration_access_token)).body.client_name).toBe('Renamed agent');
    });

    test('once CLIENT_REGISTRATION changes from open to token, a client that registered openly is still held to the open rules', async () => {
      const reg = await registered();
      // The same database, now served with CLIENT_REGISTRATION=token: the registration access token of an open
      // registration must not stand in for an initial access token.
      const config = loadConfig({
        ...TEST_ENV,
        DATA_DIR: path.join(os.tmpdir(), 'sso-test-data'),
        DATABASE_URL: t.databaseUrl,
        CLIENT_REGISTRATION: 'token',
        ALLOW_HTTP_REDIRECT_URIS: 'true',
      });
      const ctx = createServiceContext(config, { mailer: createCapturingMailer([]) });
      const tokenApp = createApp({ ctx });
      const put = (body: Record<string, unknown>) =>
        request(tokenApp)
          .put(new URL(reg.registration_client_uri).pathname)
          .set('Authorization', `Bearer ${reg.registration_access_token}`)
          .send(body);
      try {
        const cases: Array<[Record<string, unknown>, string]> = [
          [{ ...mcpClient, grant_types: ['urn:ietf:params:oauth:grant-type:device_code'] }, 'invalid_client_metadata'],
          [{ ...mcpClient, scope: 'openid read write admin' }, 'invalid_client_metadata'],
          [{ ...mcpClient, redirect_uris: ['http://intranet.example/cb'] }, 'invalid_redirect_uri'],
          [{ ...mcpClient, redirect_uris: ['com.example.agent:/cb'] }, 'invalid_redirect_uri'],
        ];
        for (const [body, error] of cases) {
          const refused = await put(body);
          expect([refused.status, refused.body.error]).toEqual([400, error]);
        }
        const row = await t.db('oauth_clients').where({ client_id: reg.client_id }).first();
        expect(row.grant_types).toEqual(['authorization_code', 'refresh_token']);
        expect(row.scopes).toEqual(['openid', 'profile']);
        // What the open rules allow still goes through.
        const allowed = await put({ ...mcpClient, client_name: 'Renamed under token mode' });
        expect(allowed.status).toBe(200);
        expect(allowed.body.client_name).toBe('Renamed under token mode');
      } finally {
        await closeServiceContext(ctx);
      }
    });

    test('update and delete commit with their audit rows or not at all', async () => {
      const reg = await registered();
      const allowChange = await refuseAuditRows(t, 'oauth.client.changed');
      try {
        const res = await manage(t, 'put', reg.registration_client_uri, reg.registration_access_token).send({
          ...mcpClient,
          client_name: 'Never saved',
        });
        expect(res.status).toBeGreaterThanOrEqual(500);
      } finally {
        await allowChange();
      }
      expect((await t.db('oauth_clients').where({ client_id: reg.client_id }).first()).name).toBe(mcpClient.client_name);
      const allowDelete = await refuseAuditRows(t, 'oauth.client.deleted');
      try {
        expect((await manage(t, 'delete', reg.registration_client_uri, reg.registration_access_token)).status).toBeGreaterThanOrEqual(500);
      } finally {
        await allowDelete();
      }
      expect(await t.db('oauth_clients').where({ client_id: reg.client_id }).first()).toBeDefined();
    });

    test('delete: 204, the client and its sessions are gone, the token stops working, audited', async () => {
      const reg = await registered();
      const client = { clientId: reg.client_id, redirectUris: [LOOPBACK] };
      const { agent } = await signIn(t, await makeUser(t));
      const { code, verifier, redirectUri } = await obtainCode(agent, client, { scope: 'openid profile' });
      const tokens = await exchangeAsPublic(t, reg.client_id, { code, verifier, redirectUri });
      expect(tokens.status).toBe(200);

      const res = await manage(t, 'delete', reg.registration_client_uri, reg.registration_access_token);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(await t.db('oauth_clients').where({ client_id: reg.client_id }).first()).toBeUndefined();
      expect(await t.db('sessions').where({ client_id: reg.client_id }).first()).toBeUndefined();
      expect((await manage(t, 'get', reg.registration_client_uri, reg.registration_access_token)).status).toBe(401);
      const me = await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${tokens.body.access_token}`);
      expect(me.status).toBe(401);
      const refresh = await request(t.app)
        .post('/api/oauth/token')
        .type('form')
        .send({ grant_type: 'refresh_token', client_id: reg.client_id, refresh_token: tokens.body.refresh_token });
      expect(refresh.status).toBe(401);
      expect(refresh.body.error).toBe('invalid_client');
      expect(await auditTypes(t, reg.client_id)).toEqual(expect.arrayContaining(['oauth.client.registered', 'oauth.client.deleted']));
    });
  });

  test('the consent page warns that no administrator reviewed the app, in the reader’s language; admin clients carry no warning', async () => {
    const reg = (await register(t, { ...mcpClient, client_name: 'Totally Official Mail' })).body;
    const client = { clientId: reg.client_id, redirectUris: [LOOPBACK] };
    const { agent } = await signIn(t, await makeUser(t));
    const toConsent = await agent.get(authorizePath(authorizeParams(client, { scope: 'openid profile' }).params));
    const consentUrl = new URL(toConsent.headers.location);
    expect(consentUrl.pathname).toBe('/consent');
    const page = await agent.get(consentUrl.pathname + consentUrl.search);
    expect(page.status).toBe(200);
    expect(page.text).toContain('id="unreviewed-app"');
    expect(page.text).toContain('No administrator has reviewed this app');
    expect(page.text).toContain('you will be sent to 127.0.0.1');
    const german = await agent.get(consentUrl.pathname + consentUrl.search).set('Accept-Language', 'de');
    expect(german.text).toContain('Kein Administrator hat diese App geprüft');

    const vetted = await makeClient(t, { name: 'Vetted app' });
    const toVetted = await agent.get(authorizePath(authorizeParams(vetted).params));
    const vettedUrl = new URL(toVetted.headers.location);
    const vettedPage = await agent.get(vettedUrl.pathname + vettedUrl.search);
    expect(vettedPage.status).toBe(200);
    expect(vettedPage.text).not.toContain('unreviewed-app');
  });

  test('admins deactivate a dynamic client like any other: authorize refuses it', async () => {
    const reg = (await register(t, mcpClient)).body;
    const off = await request(t.app).delete(`/api/admin/oauth-clients/${reg.client_id}`).set('Authorization', admin);
    expect(off.status).toBe(200);
    expect(off.body.client).toMatchObject({ registration: 'dynamic', is_active: false });
    const { agent } = await signIn(t, await makeUser(t));
    const res = await agent.get(authorizePath(authorizeParams({ clientId: reg.client_id, redirectUris: [LOOPBACK] }).params));
    expect(res.status).toBe(400);
  });

  test('unused dynamic clients are pruned after 30 days; a use keeps one 30 days from then, recorded at most daily', async () => {
    const unused = (await register(t, { ...mcpClient, client_name: 'Never used' })).body.client_id as string;
    const used = (await register(t, { ...mcpClient, client_name: 'Used' })).body.client_id as string;
    const vetted = await makeClient(t, { name: 'Admin client, never used' });
    const client = { clientId: used, redirectUris: [LOOPBACK] };
    const user = await makeUser(t);
    const exists = async (id: string) => (await t.db('oauth_clients').where({ client_id: id }).first()) !== undefined;

    t.clock.advance(20 * DAY);
    const { agent } = await signIn(t, user);
    const first = await obtainCode(agent, client, { scope: 'openid profile' });
    expect((await exchangeAsPublic(t, used, first)).status).toBe(200);
    const lastUsed = (await t.db('oauth_clients').where({ client_id: used }).first()).last_used_at as Date;
    expect(Math.abs(lastUsed.getTime() - t.clock.now().getTime())).toBeLessThan(5000);
    // A second token within the day writes nothing.
    t.clock.advance(3600);
    const second = await obtainCode(agent, client, { scope: 'openid profile' });
    expect((await exchangeAsPublic(t, used, second)).status).toBe(200);
    expect((await t.db('oauth_clients').where({ client_id: used }).first()).last_used_at).toEqual(lastUsed);

    t.clock.advance(11 * DAY);
    const counts = await pruneExpired(t.ctx);
    expect(counts.oauth_clients).toBeGreaterThanOrEqual(1);
    expect(await exists(unused)).toBe(false);
    expect(await exists(used)).toBe(true);
    expect(await exists(vetted.clientId)).toBe(true);

    t.clock.advance(20 * DAY);
    await pruneExpired(t.ctx);
    expect(await exists(used)).toBe(false);
    expect(await exists(vetted.clientId)).toBe(true);
  });
});

describe('the per-IP registration budget (CONTRACT §13 abuse limit)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { CLIENT_REGISTRATION: 'open', CLIENT_REGISTRATION_RATE_LIMIT_MAX: '2' } });
  });
  afterAll(async () => {
    await t.close();
  });

  test('past CLIENT_REGISTRATION_RATE_LIMIT_MAX a registration is 429 with Retry-After; management is not counted', async () => {
    const body = { client_name: 'Burst', redirect_uris: [LOOPBACK], token_endpoint_auth_method: 'none' };
    const first = await register(t, body);
    expect(first.status).toBe(201);
    expect((await register(t, body)).status).toBe(201);
    const third = await register(t, body);
    expect(third.status).toBe(429);
    expect(third.body.error).toBe('invalid_request');
    expect(Number(third.headers['retry-after'])).toBeGreaterThan(0);
    expect(await t.db('oauth_clients').where({ name: 'Burst' }).count('* as n')).toEqual([{ n: '2' }]);
    for (let i = 0; i < 3; i++) {
      expect((await manage(t, 'get', first.body.registration_client_uri, first.body.registration_access_token)).status).toBe(200);
    }
  });
});

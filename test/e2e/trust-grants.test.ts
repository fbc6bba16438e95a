import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { csrfOf, makeApiResource, makeAppClient } from '../helpers/apps';
import { makeUser, signIn } from '../helpers/factories';
import { authorizeParams, authorizePath, basicAuth, locationParams, obtainCode } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Issue 30, fourth review, CONTRACT §23 "Grants are bound to what was consented": a grant (the person's consent record
 * for a client) records the API resources (RFC 8707, CONTRACT §12) and the redirect URIs consented to. A client
 * approved for API A, or for sign-in only, gets no RFC 9068 token for API B at code exchange, at refresh, or by
 * silent re-authorization; a self-registered client redirecting to a URI the person never saw needs consent again.
 * Silent re-authorization is audited.
 */
const jose = require('jose') as typeof import('jose');

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { CLIENT_REGISTRATION: 'open' } });
});
afterAll(async () => {
  await t.close();
});

const api = () => request(t.app);
const token = (form: Record<string, string>, auth: string) =>
  api().post('/api/oauth/token').set('Authorization', auth).type('form').send(form);
const sessionsCount = async () => Number((await t.db('sessions').count('* as n').first())!.n);

/** A confidential client allowed two APIs, and a signed-in person. */
async function setUp() {
  const a = await makeApiResource(t, { name: 'Invoices API', scopes: ['invoices:read'] });
  const b = await makeApiResource(t, { name: 'Payroll API', scopes: ['payroll:read'] });
  const client = await makeAppClient(t, { allowedResources: [a.identifier, b.identifier] });
  const app = { ...client, clientSecret: client.clientSecret! };
  const user = await makeUser(t);
  const { agent } = await signIn(t, user);
  return { a, b, app, user, agent, auth: basicAuth(client.clientId, client.clientSecret!) };
}

async function exchange(auth: string, got: { code: string; verifier: string; redirectUri: string }, resource?: string) {
  return token(
    {
      grant_type: 'authorization_code',
      code: got.code,
      code_verifier: got.verifier,
      redirect_uri: got.redirectUri,
      ...(resource ? { resource } : {}),
    },
    auth,
  );
}

/** The authorize request's outcome: 'consent' (the page), 'code', or the error it redirected with. */
async function authorizeOutcome(agent: TestAgent, client: { clientId: string; redirectUris: string[] }, overrides: Record<string, string>) {
  const res = await agent.get(authorizePath(authorizeParams(client, overrides).params));
  expect(res.status).toBe(302);
  const location = new URL(res.headers.location);
  if (location.pathname === '/consent') return { kind: 'consent' as const, requestId: location.searchParams.get('request_id')! };
  const q = locationParams(res.headers.location);
  if (q.get('code')) return { kind: 'code' as const, code: q.get('code')! };
  return { kind: 'error' as const, error: q.get('error'), description: q.get('error_description') };
}

describe('a grant records the APIs consented to', () => {
  test('approving with a resource records it (and the redirect URI) on the grant; consent-info and the page name the API', async () => {
    const { a, app, user, agent } = await setUp();
    const asked = await authorizeOutcome(agent, app, { scope: 'openid invoices:read', resource: a.identifier });
    expect(asked.kind).toBe('consent');
    const requestId = (asked as { requestId: string }).requestId;
    const info = await agent.get(`/api/oauth/consent-info?request_id=${requestId}`);
    expect(info.status).toBe(200);
    expect(info.body.resources).toEqual([{ identifier: a.identifier, name: 'Invoices API' }]);
    const page = await agent.get(`/consent?request_id=${requestId}`);
    expect(page.text).toContain('Invoices API');
    expect(page.text).toContain(a.identifier);
    expect(page.text).toMatch(/access to these APIs/i);
    const german = await agent.get(`/consent?request_id=${requestId}&ui_locales=de`);
    expect(german.text).toContain('Invoices API');
    expect(german.text).toMatch(/Zugriff auf diese APIs/);
    await agent.post('/api/oauth/authorize/approve').send({ request_id: requestId });
    const grant = await t.db('oauth_grants').where({ user_id: user.id, client_id: app.clientId }).first();
    expect(grant.resources).toEqual([a.identifier]);
    expect(grant.redirect_uris).toEqual([app.redirectUris[0]]);
  });

  test('a sign-in-only consent names no API', async () => {
    const { app, agent } = await setUp();
    const asked = await authorizeOutcome(agent, app, { scope: 'openid' });
    const requestId = (asked as { requestId: string }).requestId;
    expect((await agent.get(`/api/oauth/consent-info?request_id=${requestId}`)).body.resources).toEqual([]);
    expect((await agent.get(`/consent?request_id=${requestId}`)).text).not.toMatch(/access to these APIs/i);
  });
});

describe('code exchange: a resource not in the grant is invalid_target', () => {
  test('approved for sign-in only: the code cannot be exchanged for an RFC 9068 token for an API; nothing is issued', async () => {
    const { a, app, agent, auth } = await setUp();
    const got = await obtainCode(agent, app, { scope: 'openid' });
    const before = await sessionsCount();
    const res = await exchange(auth, got, a.identifier);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_target');
    expect(res.body.error_description).toMatch(/not approved/);
    expect(res.body).not.toHaveProperty('access_token');
    expect(await sessionsCount()).toBe(before);
  });

  test('approved for API A: a silently re-issued code cannot be exchanged for API B, but still for A', async () => {
    const { a, b, app, agent, auth } = await setUp();
    const first = await obtainCode(agent, app, { scope: 'openid', resource: a.identifier });
    expect((await exchange(auth, first)).status).toBe(200);
    // Sign-in only is covered by the grant: the code comes back without the consent page.
    const silent = await authorizeOutcome(agent, app, { scope: 'openid' });
    expect(silent.kind).toBe('code');
    const { params, verifier } = authorizeParams(app, { scope: 'openid' });
    const code = locationParams((await agent.get(authorizePath(params))).headers.location).get('code')!;
    const forB = await exchange(auth, { code, verifier, redirectUri: params.redirect_uri! }, b.identifier);
    expect(forB.status).toBe(400);
    expect(forB.body.error).toBe('invalid_target');

    const again = authorizeParams(app, { scope: 'openid' });
    const code2 = locationParams((await agent.get(authorizePath(again.params))).headers.location).get('code')!;
    const forA = await exchange(auth, { code: code2, verifier: again.verifier, redirectUri: again.params.redirect_uri! }, a.identifier);
    expect(forA.status).toBe(200);
    expect(jose.decodeJwt(forA.body.access_token).aud).toBe(a.identifier);
  });
});

describe('refresh: a resource not in the grant is invalid_target, and the refresh token is not burned', () => {
  test('approved for API A: refresh for B refused, refresh for A works', async () => {
    const { a, b, app, agent, auth } = await setUp();
    const got = await obtainCode(agent, app, { scope: 'openid invoices:read', resource: a.identifier });
    const tokens = (await exchange(auth, got)).body;
    const forB = await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, resource: b.identifier }, auth);
    expect(forB.status).toBe(400);
    expect(forB.body.error).toBe('invalid_target');
    const forA = await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, resource: a.identifier }, auth);
    expect(forA.status).toBe(200);
    expect(jose.decodeJwt(forA.body.access_token)).toMatchObject({ aud: a.identifier, scope: 'openid invoices:read' });
  });

  test('approved for sign-in only: refresh for an API refused; a plain refresh still works', async () => {
    const { a, app, agent, auth } = await setUp();
    const tokens = (await exchange(auth, await obtainCode(agent, app, { scope: 'openid' }))).body;
    const forA = await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, resource: a.identifier }, auth);
    expect(forA.status).toBe(400);
    expect(forA.body.error).toBe('invalid_target');
    const plain = await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, auth);
    expect(plain.status).toBe(200);
    expect(jose.decodeProtectedHeader(plain.body.access_token).alg).toBe('HS256');
  });

  test('the grant revoked from connected apps: nothing to refresh for any API', async () => {
    const { a, app, agent, auth } = await setUp();
    const tokens = (await exchange(auth, await obtainCode(agent, app, { scope: 'openid', resource: a.identifier }))).body;
    expect((await agent.delete(`/api/auth/apps/${app.clientId}`)).status).toBeLessThan(300);
    const res = await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, resource: a.identifier }, auth);
    expect(res.status).toBe(400);
    expect(['invalid_grant', 'invalid_target']).toContain(res.body.error);
  });
});

describe('silent re-authorization: a resource not in the grant needs consent again', () => {
  test('approved for A: authorize for B shows the consent page naming B; prompt=none answers consent_required', async () => {
    const { a, b, app, user, agent } = await setUp();
    await obtainCode(agent, app, { scope: 'openid', resource: a.identifier });
    expect((await authorizeOutcome(agent, app, { scope: 'openid', resource: a.identifier })).kind).toBe('code');

    const none = await authorizeOutcome(agent, app, { scope: 'openid', resource: b.identifier, prompt: 'none' });
    expect(none).toMatchObject({ kind: 'error', error: 'consent_required' });
    const forB = await authorizeOutcome(agent, app, { scope: 'openid', resource: b.identifier });
    expect(forB.kind).toBe('consent');
    const page = await agent.get(`/consent?request_id=${(forB as { requestId: string }).requestId}`);
    expect(page.text).toContain('Payroll API');
    await agent.post('/api/oauth/authorize/approve').send({ request_id: (forB as { requestId: string }).requestId });
    const grant = await t.db('oauth_grants').where({ user_id: user.id, client_id: app.clientId }).first();
    expect([...grant.resources].sort()).toEqual([a.identifier, b.identifier].sort());
    expect((await authorizeOutcome(agent, app, { scope: 'openid', resource: b.identifier, prompt: 'none' })).kind).toBe('code');
  });

  test('approved for sign-in only: authorize for an API shows consent; prompt=none answers consent_required', async () => {
    const { a, app, agent } = await setUp();
    await obtainCode(agent, app, { scope: 'openid' });
    expect((await authorizeOutcome(agent, app, { scope: 'openid', resource: a.identifier })).kind).toBe('consent');
    expect(await authorizeOutcome(agent, app, { scope: 'openid', resource: a.identifier, prompt: 'none' })).toMatchObject({
      kind: 'error',
      error: 'consent_required',
    });
  });

  test('a silent re-authorization is audited: who, which client, scopes, resource and redirect URI', async () => {
    const { a, app, user, agent } = await setUp();
    await obtainCode(agent, app, { scope: 'openid invoices:read', resource: a.identifier });
    expect(await t.db('audit_events').where({ type: 'oauth.consent.reused', subject_id: user.id })).toHaveLength(0);
    expect((await authorizeOutcome(agent, app, { scope: 'openid', resource: a.identifier })).kind).toBe('code');
    const rows = await t.db('audit_events').where({ type: 'oauth.consent.reused', subject_id: user.id });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ actor_id: user.id, client_id: app.clientId });
    expect(rows[0].detail).toEqual({ scopes: ['openid'], resource: a.identifier, redirect_uri: app.redirectUris[0], prompt_none: false });
  });
});

describe('the device grant records the API approved on /device', () => {
  test('approval on /device names the API, records it, and a refresh for it works', async () => {
    const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code';
    const a = await makeApiResource(t, { name: 'Telemetry API', scopes: ['telemetry:write'] });
    const client = await makeAppClient(t, {
      type: 'public',
      grantTypes: [DEVICE, 'refresh_token'],
      redirectUris: [],
      allowedResources: [a.identifier],
    });
    const started = await api()
      .post('/api/oauth/device_authorization')
      .type('form')
      .send({ client_id: client.clientId, scope: 'openid telemetry:write', resource: a.identifier });
    expect(started.status).toBe(200);
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    const entry = await agent.get('/device');
    const confirm = await agent
      .post('/device')
      .type('form')
      .send({ user_code: started.body.user_code, csrf: csrfOf(entry.text) });
    expect(confirm.text).toContain('Telemetry API');
    await agent
      .post('/device/decide')
      .type('form')
      .send({ user_code: started.body.user_code, decision: 'approve', csrf: csrfOf(confirm.text) });
    const grant = await t.db('oauth_grants').where({ user_id: user.id, client_id: client.clientId }).first();
    expect(grant.resources).toEqual([a.identifier]);
    const polled = await api()
      .post('/api/oauth/token')
      .type('form')
      .send({ grant_type: DEVICE, device_code: started.body.device_code, client_id: client.clientId });
    expect(polled.status).toBe(200);
    const refreshed = await api()
      .post('/api/oauth/token')
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: polled.body.refresh_token, client_id: client.clientId, resource: a.identifier });
    expect(refreshed.status).toBe(200);
    expect(jose.decodeJwt(refreshed.body.access_token).aud).toBe(a.identifier);
  });
});

describe('a self-registered client: consent is bound to the redirect URI used', () => {
  const register = (body: Record<string, unknown>) =>
    api()
      .post('/api/oauth/register')
      .send({ token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], ...body });

  test('a redirect URI added by a registration update needs consent again, naming its host; the consented one stays silent', async () => {
    const reg = await register({ client_name: 'Notes sync', redirect_uris: ['https://notes.example/cb'] });
    expect(reg.status).toBe(201);
    const client = { clientId: reg.body.client_id as string, redirectUris: ['https://notes.example/cb'] };
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    await obtainCode(agent, client, { scope: 'openid' });
    expect((await authorizeOutcome(agent, client, { scope: 'openid' })).kind).toBe('code');

    const updated = await api()
      .put(new URL(reg.body.registration_client_uri).pathname)
      .set('Authorization', `Bearer ${reg.body.registration_access_token}`)
      .send({
        client_name: 'Notes sync',
        token_endpoint_auth_method: 'none',
        redirect_uris: ['https://notes.example/cb', 'https://collector.example/steal'],
      });
    expect(updated.status).toBe(200);
    const other = { scope: 'openid', redirect_uri: 'https://collector.example/steal' };
    expect(await authorizeOutcome(agent, client, { ...other, prompt: 'none' })).toMatchObject({ kind: 'error', error: 'consent_required' });
    const asked = await authorizeOutcome(agent, client, other);
    expect(asked.kind).toBe('consent');
    const page = await agent.get(`/consent?request_id=${(asked as { requestId: string }).requestId}`);
    expect(page.text).toContain('collector.example');
    expect(await t.db('audit_events').where({ type: 'oauth.consent.reused', client_id: client.clientId })).toHaveLength(1);
    // The URI the person consented to keeps working without a page.
    expect((await authorizeOutcome(agent, client, { scope: 'openid' })).kind).toBe('code');
    await agent.post('/api/oauth/authorize/approve').send({ request_id: (asked as { requestId: string }).requestId });
    expect((await authorizeOutcome(agent, client, other)).kind).toBe('code');
    const grant = await t.db('oauth_grants').where({ user_id: user.id, client_id: client.clientId }).first();
    expect(grant.redirect_uris).toEqual(['https://notes.example/cb', 'https://collector.example/steal']);
  });

  test('a loopback redirect URI on another port is the same consented URI (RFC 8252 §7.3)', async () => {
    const reg = await register({ client_name: 'CLI', redirect_uris: ['http://127.0.0.1/callback'] });
    expect(reg.status).toBe(201);
    const client = { clientId: reg.body.client_id as string, redirectUris: ['http://127.0.0.1:50111/callback'] };
    const { agent } = await signIn(t, await makeUser(t));
    await obtainCode(agent, client, { scope: 'openid' });
    expect((await authorizeOutcome(agent, client, { scope: 'openid', redirect_uri: 'http://127.0.0.1:50999/callback' })).kind).toBe('code');
  });

  test('an administrator-registered client is not bound: its redirect URIs were reviewed', async () => {
    const client = await makeAppClient(t, { redirectUris: ['https://app.test/callback', 'https://app.test/other'] });
    const { agent } = await signIn(t, await makeUser(t));
    await obtainCode(agent, client, { scope: 'openid' });
    expect((await authorizeOutcome(agent, client, { scope: 'openid', redirect_uri: 'https://app.test/other' })).kind).toBe('code');
  });
});

describe('/login names a self-registered app as not reviewed (before the password is typed)', () => {
  const loginFor = (clientId: string, redirectUri: string) => {
    const authorizeUrl = `${t.config.baseUrl}${authorizePath(authorizeParams({ clientId, redirectUris: [redirectUri] }).params)}`;
    return `/login?${new URLSearchParams({ return_to: authorizeUrl })}`;
  };

  test('a dynamically registered app: its self-chosen name with the warning, in English and German', async () => {
    const reg = await api()
      .post('/api/oauth/register')
      .send({ client_name: 'Totally Official Bank', redirect_uris: ['https://bank.example/cb'], token_endpoint_auth_method: 'none' });
    expect(reg.status).toBe(201);
    const page = await api().get(loginFor(reg.body.client_id, 'https://bank.example/cb'));
    expect(page.status).toBe(200);
    expect(page.text).toContain('to continue to Totally Official Bank');
    expect(page.text).toContain('No administrator has reviewed this app');
    expect(page.text).toContain('This app registered itself');
    const german = await api().get(loginFor(reg.body.client_id, 'https://bank.example/cb')).set('Accept-Language', 'de');
    expect(german.text).toContain('um mit Totally Official Bank fortzufahren');
    expect(german.text).toContain('Kein Administrator hat diese App geprüft');
    expect(german.text).toContain('Diese App hat sich selbst registriert');
  });

  test('an administrator-registered app: its name, no warning', async () => {
    const client = await makeAppClient(t, { name: 'Payroll Portal' });
    const page = await api().get(loginFor(client.clientId, client.redirectUris[0]!));
    expect(page.text).toContain('to continue to Payroll Portal');
    expect(page.text).not.toContain('No administrator has reviewed this app');
  });
});

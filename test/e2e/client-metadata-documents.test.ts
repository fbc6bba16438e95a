import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { createApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { closeServiceContext, createServiceContext } from '../../src/create-context';
import { createMetadataDocumentFetcher } from '../../src/services/oauth/registration/client-metadata.service';
import { pruneExpired } from '../../src/services/prune.service';
import { makeSignedInUser, makeUser, signIn } from '../helpers/factories';
import { documentHandler, startHttpsHost, type HttpsHost } from '../helpers/mcp-https';
import { obtainCode, pkcePair, type TestClient } from '../helpers/oauth';
import { createCapturingMailer, createTestApp, TEST_ENV, type TestApp } from '../helpers/test-app';

/**
 * CONTRACT §13 Client ID Metadata Documents at our own endpoints (supertest): what /authorize answers for documents
 * that cannot be used, what consent shows, and that the feature is off by default.
 */
let on: TestApp;
let off: TestApp;
let docs: HttpsHost;
const documents = new Map<string, { body: unknown; cacheControl?: string }>();

beforeAll(async () => {
  docs = await startHttpsHost(documentHandler(documents));
  on = await createTestApp({
    env: { CLIENT_ID_METADATA_DOCUMENTS: 'true', CIMD_ALLOWED_HOSTS: 'localhost' },
    clientMetadata: (config, clock) => createMetadataDocumentFetcher({ clock, allowedHosts: config.cimdAllowedHosts, ca: docs.ca }),
  });
  off = await createTestApp();
});
afterAll(async () => {
  await on?.close();
  await off?.close();
  await docs?.close();
});

function publish(name: string, extra: Record<string, unknown> = {}, cacheControl?: string): string {
  const url = `${docs.origin}/${name}.json`;
  documents.set(`/${name}.json`, {
    body: { client_id: url, client_name: 'Notes Agent', redirect_uris: ['https://agent.example/cb'], ...extra },
    cacheControl,
  });
  return url;
}

/** A metadata-document client as the OAuth helpers take it (no secret: client_id alone at the token endpoint). */
const asClient = (clientId: string, redirectUri = 'https://agent.example/cb') =>
  ({ clientId, redirectUris: [redirectUri] }) as unknown as TestClient;

/** Signed-in agent -> authorize -> consent -> code -> tokens, with client_id alone (a public client). */
async function cimdTokens(t: TestApp, agent: TestAgent, clientId: string) {
  const { code, verifier, redirectUri } = await obtainCode(agent, asClient(clientId));
  const res = await request(t.app)
    .post('/api/oauth/token')
    .type('form')
    .send({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, client_id: clientId });
  expect(res.status).toBe(200);
  return res.body as { access_token: string; refresh_token: string; scope: string };
}

const refresh = (t: TestApp | { app: TestApp['app'] }, clientId: string, refreshToken: string, extra: Record<string, string> = {}) =>
  request(t.app)
    .post('/api/oauth/token')
    .type('form')
    .send({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId, ...extra });

function authorizeQuery(clientId: string, redirectUri = 'https://agent.example/cb') {
  return {
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    state: 'st',
    scope: 'openid profile',
  };
}

describe('CLIENT_ID_METADATA_DOCUMENTS off (default)', () => {
  test('discovery does not announce it and an https client_id is an unknown client, never fetched', async () => {
    const url = publish('off');
    const discovery = await request(off.app).get('/.well-known/openid-configuration');
    expect(discovery.body.client_id_metadata_document_supported).toBeUndefined();
    const res = await request(off.app).get('/api/oauth/authorize').query(authorizeQuery(url)).set('Accept', 'application/json');
    expect(res.status).toBe(400);
    expect(res.body.error_description ?? res.body.message).toMatch(/Unknown or inactive client/);
    expect(docs.hits.get('/off.json')).toBeUndefined();
  });
});

describe('CLIENT_ID_METADATA_DOCUMENTS on', () => {
  test('both discovery documents announce client_id_metadata_document_supported', async () => {
    expect((await request(on.app).get('/.well-known/oauth-authorization-server')).body.client_id_metadata_document_supported).toBe(true);
    expect((await request(on.app).get('/.well-known/openid-configuration')).body.client_id_metadata_document_supported).toBe(true);
  });

  test('a redirect_uri the document does not list: 400, no redirect', async () => {
    const url = publish('redirect-mismatch');
    const res = await request(on.app)
      .get('/api/oauth/authorize')
      .query(authorizeQuery(url, 'https://evil.example/cb'))
      .set('Accept', 'application/json');
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(JSON.stringify(res.body)).toMatch(/redirect_uri is not registered/);
  });

  test('a document on a private address: 400 saying why, no redirect, no client row', async () => {
    const url = 'https://10.0.0.5/client.json';
    const res = await request(on.app).get('/api/oauth/authorize').query(authorizeQuery(url)).set('Accept', 'application/json');
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(JSON.stringify(res.body)).toMatch(/metadata document cannot be used: the client_id’s host does not resolve to a public address/);
    expect(await on.db('oauth_clients').where({ client_id: url })).toHaveLength(0);
  });

  test('a client_id URL the draft forbids (no path) or too long: 400 before any fetch', async () => {
    for (const [url, reason] of [
      [docs.origin, /client_id URL must have a path/],
      [`${docs.origin}/${'a'.repeat(2100)}`, /client_id URL is too long/],
    ] as const) {
      const res = await request(on.app).get('/api/oauth/authorize').query(authorizeQuery(url)).set('Accept', 'application/json');
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toMatch(reason);
    }
    expect(docs.hits.get('/')).toBeUndefined();
  });

  test('a document whose client_id differs: 400', async () => {
    const url = `${docs.origin}/liar.json`;
    documents.set('/liar.json', { body: { client_id: `${docs.origin}/other.json`, redirect_uris: ['https://agent.example/cb'] } });
    const res = await request(on.app).get('/api/oauth/authorize').query(authorizeQuery(url)).set('Accept', 'application/json');
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toMatch(/client_id differs from its URL/);
  });

  test("consent names the document's client_name, the URL's host, and says no administrator reviewed it", async () => {
    const url = publish('consent');
    const user = await makeUser(on);
    const { agent } = await signIn(on, user);
    const res = await agent.get('/api/oauth/authorize').query(authorizeQuery(url));
    expect(res.status).toBe(302);
    const consent = new URL(res.headers.location);
    expect(consent.pathname).toBe('/consent');
    const page = await agent.get(consent.pathname + consent.search);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Notes Agent wants to access your account');
    expect(page.text).toContain(`This app is identified by its address at ${new URL(url).host}.`);
    expect(page.text).toContain('No administrator reviewed this app');
    const row = await on.db('oauth_clients').where({ client_id: url }).first();
    expect(row).toMatchObject({ registration: 'metadata_document', type: 'public', secret_hash: null, name: 'Notes Agent' });
  });

  test('a scope outside the open-registration scopes is refused (redirect with invalid_scope)', async () => {
    const url = publish('admin-scope');
    const { agent } = await signIn(on, await makeUser(on));
    const res = await agent.get('/api/oauth/authorize').query({ ...authorizeQuery(url), scope: 'read admin' });
    expect(res.status).toBe(302);
    expect(new URL(res.headers.location).searchParams.get('error')).toBe('invalid_scope');
  });

  test('token endpoint: the code and refresh grants with client_id alone; a client secret is refused', async () => {
    const url = publish('tokens');
    const { agent } = await signIn(on, await makeUser(on));
    const tokens = await cimdTokens(on, agent, url);
    expect(tokens.scope).toBe('openid profile email');
    const refreshed = await refresh(on, url, tokens.refresh_token);
    expect(refreshed.status).toBe(200);
    const withSecret = await refresh(on, url, refreshed.body.refresh_token, { client_secret: 'guess' });
    expect(withSecret.status).toBe(401);
    expect(withSecret.body.error).toBe('invalid_client');
  });

  test('a changed document reaches the client row once the cached copy expires, and is audited', async () => {
    const url = publish('changing', {}, 'max-age=60');
    const { agent } = await signIn(on, await makeUser(on));
    await obtainCode(agent, asClient(url));
    publish('changing', { redirect_uris: ['https://agent.example/new-cb'] }, 'max-age=60');
    const cached = await agent.get('/api/oauth/authorize').query(authorizeQuery(url, 'https://agent.example/new-cb'));
    expect(cached.status).toBe(400);
    on.clock.advance(61);
    const fresh = await agent.get('/api/oauth/authorize').query(authorizeQuery(url, 'https://agent.example/new-cb'));
    expect(fresh.status).toBe(302);
    const row = await on.db('oauth_clients').where({ client_id: url }).first();
    expect(row.redirect_uris).toEqual(['https://agent.example/new-cb']);
    const changed = await on.db('audit_events').where({ type: 'oauth.client.changed', client_id: url });
    expect(changed).toHaveLength(1);
    expect(changed[0].detail).toMatchObject({ registration: 'metadata_document' });
  });

  test('a document taken down stops refresh once the cached copy expires', async () => {
    const url = publish('taken-down');
    const { agent } = await signIn(on, await makeUser(on));
    const tokens = await cimdTokens(on, agent, url);
    documents.delete('/taken-down.json');
    on.clock.advance(301);
    const res = await refresh(on, url, tokens.refresh_token);
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
  });

  test('admins may deactivate a metadata-document client but not edit what its document says', async () => {
    const url = publish('admin-edit');
    const { agent } = await signIn(on, await makeUser(on));
    await obtainCode(agent, asClient(url));
    const { bearer } = await makeSignedInUser(on, ['admin']);
    const path = `/api/admin/oauth-clients/${encodeURIComponent(url)}`;
    const edit = await request(on.app)
      .put(path)
      .set('Authorization', bearer)
      .send({ redirect_uris: ['https://evil.example/cb'] });
    expect(edit.status).toBe(400);
    expect(edit.body.error).toBe('validation_error');
    const off = await request(on.app).put(path).set('Authorization', bearer).send({ is_active: false });
    expect(off.status).toBe(200);
    expect(off.body.client).toMatchObject({ client_id: url, is_active: false, registration: 'metadata_document' });
    const again = await agent.get('/api/oauth/authorize').query(authorizeQuery(url)).set('Accept', 'application/json');
    expect(again.status).toBe(400);
  });

  test('turning CLIENT_ID_METADATA_DOCUMENTS off: the same database refuses those clients at authorize, consent and token', async () => {
    const url = publish('turned-off');
    const user = await makeUser(on);
    const { agent } = await signIn(on, user);
    const tokens = await cimdTokens(on, agent, url);
    const pending = await agent.get('/api/oauth/authorize').query({ ...authorizeQuery(url), prompt: 'consent' });
    const requestId = new URL(pending.headers.location).searchParams.get('request_id')!;

    const config = loadConfig({ ...TEST_ENV, DATA_DIR: path.join(os.tmpdir(), 'sso-test-data'), DATABASE_URL: on.databaseUrl });
    const ctx = createServiceContext(config, { mailer: createCapturingMailer([]) });
    const offApp = createApp({ ctx });
    try {
      const offAgent = request.agent(offApp);
      expect((await offAgent.post('/api/auth/login').send({ email: user.email, password: user.password })).status).toBe(200);
      const authorize = await offAgent.get('/api/oauth/authorize').query(authorizeQuery(url)).set('Accept', 'application/json');
      expect(authorize.status).toBe(400);
      const consent = await offAgent.get(`/consent?request_id=${requestId}`);
      expect(consent.status).toBe(404);
      const token = await refresh({ app: offApp }, url, tokens.refresh_token);
      expect(token.status).toBe(401);
      expect(token.body.error).toBe('invalid_client');
    } finally {
      await closeServiceContext(ctx);
    }
  });
});

describe('abuse limit: metadata-document clients expire like dynamic ones (CONTRACT §13)', () => {
  const DAY = 24 * 3600;
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      env: { CLIENT_ID_METADATA_DOCUMENTS: 'true', CIMD_ALLOWED_HOSTS: 'localhost' },
      clientMetadata: (config, clock) => createMetadataDocumentFetcher({ clock, allowedHosts: config.cimdAllowedHosts, ca: docs.ca }),
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  test('anyone serving documents writes a client row per URL without signing in; unused for 30 days it is pruned, a used or deactivated one stays', async () => {
    const unused = publish('prune-unused');
    const used = publish('prune-used');
    const deactivated = publish('prune-deactivated');
    const row = (id: string) => t.db('oauth_clients').where({ client_id: id }).first();
    for (const url of [unused, deactivated]) {
      const res = await request(t.app).get('/api/oauth/authorize').query(authorizeQuery(url));
      expect(res.status).toBe(302);
      expect(new URL(res.headers.location, 'http://sso.test').pathname).toBe('/login');
      expect(await row(url)).toMatchObject({ registration: 'metadata_document', is_active: true });
    }
    const { bearer } = await makeSignedInUser(t, ['admin']);
    const off = await request(t.app)
      .put(`/api/admin/oauth-clients/${encodeURIComponent(deactivated)}`)
      .set('Authorization', bearer)
      .send({ is_active: false });
    expect(off.status).toBe(200);

    t.clock.advance(20 * DAY);
    const { agent } = await signIn(t, await makeUser(t));
    await cimdTokens(t, agent, used);

    t.clock.advance(11 * DAY);
    await pruneExpired(t.ctx);
    expect(await row(unused)).toBeUndefined();
    expect(await row(used)).toMatchObject({ registration: 'metadata_document' });
    // An admin's deactivation is not undone by pruning the row and writing it afresh on the next use.
    expect(await row(deactivated)).toMatchObject({ is_active: false });
    const refused = await request(t.app).get('/api/oauth/authorize').query(authorizeQuery(deactivated)).set('Accept', 'application/json');
    expect(refused.status).toBe(400);
  });
});

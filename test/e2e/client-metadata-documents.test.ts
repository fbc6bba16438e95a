import request from 'supertest';
import { createMetadataDocumentFetcher } from '../../src/services/oauth/registration/client-metadata.service';
import { makeUser, signIn } from '../helpers/factories';
import { documentHandler, startHttpsHost, type HttpsHost } from '../helpers/mcp-https';
import { pkcePair } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

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

function publish(name: string, extra: Record<string, unknown> = {}): string {
  const url = `${docs.origin}/${name}.json`;
  documents.set(`/${name}.json`, {
    body: { client_id: url, client_name: 'Notes Agent', redirect_uris: ['https://agent.example/cb'], ...extra },
  });
  return url;
}

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
    expect(JSON.stringify(res.body)).toMatch(/metadata document cannot be used: the client_id’s host is not a public address/);
    expect(await on.db('oauth_clients').where({ client_id: url })).toHaveLength(0);
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
});

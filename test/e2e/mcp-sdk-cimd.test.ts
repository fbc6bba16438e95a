import * as jose from 'jose';
import request from 'supertest';
import { createMetadataDocumentFetcher } from '../../src/services/oauth/registration/client-metadata.service';
import { makeApiResource, makeAppClient } from '../helpers/apps';
import { makeSignedInUser, makeUser, signIn } from '../helpers/factories';
import { documentHandler, startHttpsHost, type HttpsHost } from '../helpers/mcp-https';
import {
  connectWithSignIn,
  InMemoryOAuthProvider,
  MCP_SCOPES,
  startExampleMcpServer,
  whoami,
  type RunningMcpServer,
} from '../helpers/mcp-harness';
import { basicAuth, createListeningTestApp } from '../helpers/oauth';
import type { TestApp } from '../helpers/test-app';

/**
 * Issue 21 / CONTRACT §13, end to end with the official MCP TypeScript SDK on both sides, in Client ID Metadata
 * Document mode: the SDK's client connects to examples/mcp-server, gets 401 + WWW-Authenticate, reads the RFC 9728
 * metadata, discovers us (client_id_metadata_document_supported), uses its https document URL as client_id (served by
 * this test on localhost, allowed through CIMD_ALLOWED_HOSTS, trusted through the fetcher's CA option), sends the user
 * through /login and /consent, exchanges the code with PKCE and `resource`, calls a tool with an RFC 9068 token whose
 * `aud` is the MCP server, and refreshes. Nothing is configured by hand but the API resource (through the admin API).
 */
let t: TestApp;
let baseUrl: string;
let stop: () => Promise<void>;
let docs: HttpsHost;
let mcp: RunningMcpServer;
const documents = new Map<string, { body: unknown; cacheControl?: string }>();

beforeAll(async () => {
  docs = await startHttpsHost(documentHandler(documents));
  ({ t, baseUrl, stop } = await createListeningTestApp(
    { CLIENT_ID_METADATA_DOCUMENTS: 'true', CIMD_ALLOWED_HOSTS: 'localhost' },
    { clientMetadata: (config, clock) => createMetadataDocumentFetcher({ clock, allowedHosts: config.cimdAllowedHosts, ca: docs.ca }) },
  ));
  mcp = await startExampleMcpServer(baseUrl);
  // The one thing an operator does (docs/mcp.md): register the MCP server as an API resource open to self-registered
  // and metadata-document clients.
  const { bearer } = await makeSignedInUser(t, ['admin']);
  const created = await request(t.app)
    .post('/api/admin/api-resources')
    .set('Authorization', bearer)
    .send({ identifier: mcp.resource, name: 'Example MCP server', scopes: MCP_SCOPES, open_registration: true });
  expect(created.status).toBe(201);
});
afterAll(async () => {
  await mcp?.stop();
  await stop?.();
  await docs?.close();
});

function publishDocument(name: string, clientName: string): string {
  const url = `${docs.origin}/${name}.json`;
  documents.set(`/${name}.json`, {
    body: {
      client_id: url,
      client_name: clientName,
      redirect_uris: ['http://127.0.0.1/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    },
    cacheControl: 'max-age=300',
  });
  return url;
}

test('without a token the MCP server answers 401 with WWW-Authenticate naming its RFC 9728 metadata, which names us', async () => {
  const res = await fetch(mcp.resource, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  expect(res.status).toBe(401);
  expect(res.headers.get('www-authenticate')).toContain(`resource_metadata="${mcp.resourceMetadataUrl}"`);
  const metadata = (await (await fetch(mcp.resourceMetadataUrl)).json()) as Record<string, unknown>;
  expect(metadata).toMatchObject({ resource: mcp.resource, authorization_servers: [baseUrl], scopes_supported: MCP_SCOPES });
  const discovery = await request(t.app).get('/.well-known/oauth-authorization-server');
  expect(discovery.body.client_id_metadata_document_supported).toBe(true);
});

test('the SDK signs in with its metadata document URL as client_id, calls whoami with an RFC 9068 token for the MCP server, and refreshes', async () => {
  const user = await makeUser(t);
  const clientId = publishDocument('claude-like', 'Claude-like MCP host');
  const provider = new InMemoryOAuthProvider({
    redirectUrl: 'http://127.0.0.1:33418/callback',
    clientName: 'Claude-like MCP host',
    clientMetadataUrl: clientId,
  });
  const connected = await connectWithSignIn({ mcpUrl: mcp.resource, baseUrl, provider, user });
  try {
    // The first exchange was the 401 with the WWW-Authenticate the SDK followed.
    expect(connected.seen[0]).toMatchObject({ status: 401, wwwAuthenticate: expect.stringContaining('resource_metadata=') });
    // What the SDK asked us for: the CIMD URL as client_id, PKCE S256, the MCP server as resource, its scope.
    const asked = connected.authorizationUrl.searchParams;
    expect(asked.get('client_id')).toBe(clientId);
    expect(asked.get('code_challenge_method')).toBe('S256');
    expect(asked.get('resource')).toBe(mcp.resource);
    expect(asked.get('scope')).toBe(MCP_SCOPES.join(' '));
    expect(docs.hits.get('/claude-like.json')).toBeGreaterThanOrEqual(1);

    expect(await whoami(connected.client)).toEqual({ sub: user.id, client_id: clientId, scope: 'mcp:tools' });

    const tokens = provider.tokens()!;
    const header = jose.decodeProtectedHeader(tokens.access_token);
    const claims = jose.decodeJwt(tokens.access_token);
    expect(header.typ).toBe('at+jwt');
    expect(claims).toMatchObject({ iss: baseUrl, aud: mcp.resource, sub: user.id, client_id: clientId, scope: 'mcp:tools' });
    expect(typeof tokens.refresh_token).toBe('string');

    // The access token goes bad: the server's 401 makes the SDK refresh (client_id alone, with `resource`) and retry.
    provider.overwriteTokens({ ...tokens, access_token: 'spoiled' });
    expect(await whoami(connected.client)).toEqual({ sub: user.id, client_id: clientId, scope: 'mcp:tools' });
    const refreshed = provider.tokens()!;
    expect(refreshed.access_token).not.toBe('spoiled');
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(jose.decodeJwt(refreshed.access_token)).toMatchObject({ aud: mcp.resource, client_id: clientId });
  } finally {
    await connected.close();
  }

  // The client exists like any other: listed by the admin API as a metadata-document client, with an audit row.
  const { bearer } = await makeSignedInUser(t, ['admin']);
  const listed = await request(t.app).get('/api/admin/oauth-clients').set('Authorization', bearer);
  const row = listed.body.clients.find((c: { client_id: string }) => c.client_id === clientId);
  expect(row).toMatchObject({
    name: 'Claude-like MCP host',
    registration: 'metadata_document',
    type: 'public',
    token_endpoint_auth_method: 'none',
    redirect_uris: ['http://127.0.0.1/callback'],
    allowed_resources: [mcp.resource],
    is_active: true,
  });
  const audit = await t.db('audit_events').where({ type: 'oauth.client.created', client_id: clientId });
  expect(audit).toHaveLength(1);
});

test('an admin deactivates the metadata-document client: its refresh fails and a new sign-in is refused at authorize', async () => {
  const user = await makeUser(t);
  const clientId = publishDocument('to-deactivate', 'Soon deactivated');
  const provider = new InMemoryOAuthProvider({
    redirectUrl: 'http://127.0.0.1:33419/callback',
    clientName: 'x',
    clientMetadataUrl: clientId,
  });
  const connected = await connectWithSignIn({ mcpUrl: mcp.resource, baseUrl, provider, user });
  const refreshToken = provider.tokens()!.refresh_token!;
  await connected.close();

  const { bearer } = await makeSignedInUser(t, ['admin']);
  const deactivated = await request(t.app)
    .delete(`/api/admin/oauth-clients/${encodeURIComponent(clientId)}`)
    .set('Authorization', bearer);
  expect(deactivated.status).toBeLessThan(300);
  const fetchedBefore = docs.hits.get('/to-deactivate.json');

  const refresh = await request(t.app)
    .post('/api/oauth/token')
    .type('form')
    .send({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId, resource: mcp.resource });
  expect(refresh.status).toBe(401);
  expect(refresh.body.error).toBe('invalid_client');

  const authorize = await request(t.app)
    .get('/api/oauth/authorize')
    .query({
      client_id: clientId,
      redirect_uri: 'http://127.0.0.1:40000/callback',
      response_type: 'code',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      state: 's',
      scope: 'mcp:tools',
      resource: mcp.resource,
    })
    .set('Accept', 'application/json');
  expect(authorize.status).toBe(400);
  expect(authorize.headers.location).toBeUndefined();
  // A deactivated client's document is not even fetched again.
  expect(docs.hits.get('/to-deactivate.json')).toBe(fetchedBefore);
});

test('the MCP server accepts nothing but an RFC 9068 token for itself: our HS256 token and a token for another API get 401', async () => {
  const call = (token: string) =>
    fetch(mcp.resource, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
  const { accessToken } = await signIn(t, await makeUser(t));
  const firstParty = await call(accessToken);
  expect(firstParty.status).toBe(401);
  expect(firstParty.headers.get('www-authenticate')).toMatch(/error="invalid_token".*resource_metadata=/);

  const other = await makeApiResource(t, { scopes: ['mcp:tools'] });
  const machine = await makeAppClient(t, {
    grantTypes: ['client_credentials'],
    redirectUris: [],
    scopes: [],
    allowedResources: [other.identifier],
  });
  const issued = await request(t.app)
    .post('/api/oauth/token')
    .set('Authorization', basicAuth(machine.clientId, machine.clientSecret!))
    .type('form')
    .send({ grant_type: 'client_credentials', resource: other.identifier, scope: 'mcp:tools' });
  expect(issued.status).toBe(200);
  expect(jose.decodeProtectedHeader(issued.body.access_token).typ).toBe('at+jwt');
  expect((await call(issued.body.access_token)).status).toBe(401);
  expect((await call('not-a-jwt')).status).toBe(401);
});

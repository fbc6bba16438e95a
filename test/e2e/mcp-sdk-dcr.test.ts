import * as jose from 'jose';
import request from 'supertest';
import { makeSignedInUser, makeUser } from '../helpers/factories';
import {
  connectWithSignIn,
  InMemoryOAuthProvider,
  MCP_SCOPES,
  startExampleMcpServer,
  whoami,
  type RunningMcpServer,
} from '../helpers/mcp-harness';
import { createListeningTestApp } from '../helpers/oauth';
import type { TestApp } from '../helpers/test-app';

/**
 * Issue 21 / CONTRACT §13, end to end with the official MCP TypeScript SDK on both sides, in open dynamic-registration
 * mode (CLIENT_REGISTRATION=open, no metadata documents): the SDK's client connects to examples/mcp-server, gets 401 +
 * WWW-Authenticate, reads the RFC 9728 metadata, discovers our registration_endpoint, registers itself (RFC 7591, a
 * public client), sends the user through /login and /consent, exchanges the code with PKCE and `resource`, calls a tool
 * with an RFC 9068 token whose `aud` is the MCP server, and refreshes. Nothing is configured by hand but
 * CLIENT_REGISTRATION and the API resource.
 */
let t: TestApp;
let baseUrl: string;
let stop: () => Promise<void>;
let mcp: RunningMcpServer;

beforeAll(async () => {
  ({ t, baseUrl, stop } = await createListeningTestApp({ CLIENT_REGISTRATION: 'open' }));
  mcp = await startExampleMcpServer(baseUrl);
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
});

test('the SDK registers itself, signs the user in, calls whoami with an RFC 9068 token for the MCP server, and refreshes', async () => {
  const discovery = await request(t.app).get('/.well-known/oauth-authorization-server');
  expect(discovery.body.registration_endpoint).toBe(`${baseUrl}/api/oauth/register`);
  expect(discovery.body.client_id_metadata_document_supported).not.toBe(true);

  const user = await makeUser(t);
  const provider = new InMemoryOAuthProvider({ redirectUrl: 'http://127.0.0.1:33419/callback', clientName: 'IDE agent' });
  const connected = await connectWithSignIn({ mcpUrl: mcp.resource, baseUrl, provider, user });
  try {
    expect(connected.seen[0]).toMatchObject({ status: 401, wwwAuthenticate: expect.stringContaining('resource_metadata=') });
    // The SDK registered through RFC 7591: the client it uses is a row marked dynamic, public, with its redirect URI.
    const clientId = provider.clientInformation()!.client_id;
    expect(clientId).toMatch(/^client_/);
    const row = await t.db('oauth_clients').where({ client_id: clientId }).first();
    expect(row).toMatchObject({ registration: 'dynamic', type: 'public', name: 'IDE agent', is_active: true });
    expect(row.redirect_uris).toEqual(['http://127.0.0.1:33419/callback']);
    const registered = await t.db('audit_events').where({ type: 'oauth.client.registered', client_id: clientId });
    expect(registered).toHaveLength(1);

    const asked = connected.authorizationUrl.searchParams;
    expect(asked.get('client_id')).toBe(clientId);
    expect(asked.get('code_challenge_method')).toBe('S256');
    expect(asked.get('resource')).toBe(mcp.resource);

    expect(await whoami(connected.client)).toEqual({ sub: user.id, client_id: clientId, scope: 'mcp:tools' });
    const tokens = provider.tokens()!;
    expect(jose.decodeProtectedHeader(tokens.access_token).typ).toBe('at+jwt');
    expect(jose.decodeJwt(tokens.access_token)).toMatchObject({ iss: baseUrl, aud: mcp.resource, sub: user.id, client_id: clientId });

    // A spoiled access token: the MCP server's 401 makes the SDK refresh (public client, with `resource`) and retry.
    provider.overwriteTokens({ ...tokens, access_token: 'spoiled' });
    expect(await whoami(connected.client)).toEqual({ sub: user.id, client_id: clientId, scope: 'mcp:tools' });
    const refreshed = provider.tokens()!;
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(jose.decodeJwt(refreshed.access_token)).toMatchObject({ aud: mcp.resource, client_id: clientId });
  } finally {
    await connected.close();
  }
});

test('an SDK host that sends no state (its provider has no state()) completes the authorization: PKCE carries the CSRF defence', async () => {
  const user = await makeUser(t);
  const provider = new InMemoryOAuthProvider({
    redirectUrl: 'http://127.0.0.1:33420/callback',
    clientName: 'Stateless host',
    sendState: false,
  });
  const connected = await connectWithSignIn({ mcpUrl: mcp.resource, baseUrl, provider, user });
  try {
    expect(connected.authorizationUrl.searchParams.has('state')).toBe(false);
    expect(connected.authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(await whoami(connected.client)).toEqual({
      sub: user.id,
      client_id: provider.clientInformation()!.client_id,
      scope: 'mcp:tools',
    });
  } finally {
    await connected.close();
  }
});

import { generateKeyPairSync } from 'node:crypto';
import request from 'supertest';
import { createClientKeysFetcher, JWKS_MAX_BYTES, JWKS_TIMEOUT_MS } from '../../src/services/oauth/client-keys';
import { createMetadataDocumentFetcher } from '../../src/services/oauth/registration/client-metadata.service';
import { webhookOutboundPolicy } from '../../src/services/webhooks/webhook-policy';
import { makeSignedInUser, makeUser } from '../helpers/factories';
import { documentHandler, startHttpsHost, type HttpsHost } from '../helpers/mcp-https';
import {
  connectWithSignIn,
  InMemoryOAuthProvider,
  MCP_SCOPES,
  startExampleMcpServer,
  whoami,
  type RunningMcpServer,
} from '../helpers/mcp-harness';
import { createListeningTestApp } from '../helpers/oauth';
import { loadEsm } from '../helpers/oidc';
import type { TestApp } from '../helpers/test-app';

/**
 * Issue 34 with the official MCP TypeScript SDK: a host whose Client ID Metadata Document declares
 * `token_endpoint_auth_method: private_key_jwt` and a `jwks_uri` (as ChatGPT's does) signs in through us and calls a
 * tool; at the token endpoint it proves itself with the SDK's own createPrivateKeyJwtAuth, for the code exchange and
 * for the refresh. The document and the key set are served over https on localhost (CIMD_ALLOWED_HOSTS, the test CA).
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
    {
      clientMetadata: (config, clock) => createMetadataDocumentFetcher({ clock, allowedHosts: config.cimdAllowedHosts, ca: docs.ca }),
      clientKeys: (config, clock) =>
        createClientKeysFetcher({
          clock,
          policyFor: (uri) => ({
            ...webhookOutboundPolicy({ isProduction: true, webhookAllowPrivate: false }, uri, {
              timeoutMs: JWKS_TIMEOUT_MS,
              maxBytes: JWKS_MAX_BYTES,
            }),
            allowedHosts: new Set(config.cimdAllowedHosts),
            ca: docs.ca,
          }),
        }),
    },
  ));
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
  await docs?.close();
});

// The SDK's helper loads its own jose (ESM only) lazily: loaded through Node's loader rather than jest's registry.
const { createPrivateKeyJwtAuth } = loadEsm<typeof import('@modelcontextprotocol/sdk/client/auth-extensions.js')>(
  '@modelcontextprotocol/sdk/client/auth-extensions.js',
);

/** An MCP host that authenticates at the token endpoint with the SDK's private_key_jwt helper. */
class SigningHost extends InMemoryOAuthProvider {
  addClientAuthentication: ReturnType<typeof createPrivateKeyJwtAuth>;
  constructor(options: ConstructorParameters<typeof InMemoryOAuthProvider>[0] & { privateKeyPem: string }) {
    super(options);
    this.addClientAuthentication = createPrivateKeyJwtAuth({
      issuer: options.clientMetadataUrl!,
      subject: options.clientMetadataUrl!,
      privateKey: options.privateKeyPem,
      alg: 'ES256',
      lifetimeSeconds: 120,
    });
  }
}

test('the SDK signs in with a metadata document declaring private_key_jwt, its assertions accepted at code exchange and refresh', async () => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'host-1', use: 'sig', alg: 'ES256' };
  documents.set('/keys.json', { body: { keys: [jwk] }, cacheControl: 'max-age=600' });
  const clientId = `${docs.origin}/signing-host.json`;
  documents.set('/signing-host.json', {
    body: {
      client_id: clientId,
      client_name: 'Signing MCP host',
      redirect_uris: ['http://127.0.0.1/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'private_key_jwt',
      jwks_uri: `${docs.origin}/keys.json`,
    },
    cacheControl: 'max-age=300',
  });
  const provider = new SigningHost({
    redirectUrl: 'http://127.0.0.1:33431/callback',
    clientName: 'Signing MCP host',
    clientMetadataUrl: clientId,
    privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
  });
  const user = await makeUser(t);
  const connected = await connectWithSignIn({ mcpUrl: mcp.resource, baseUrl, provider, user });
  try {
    expect(await whoami(connected.client)).toEqual({ sub: user.id, client_id: clientId, scope: 'mcp:tools' });
    const tokens = provider.tokens()!;
    provider.overwriteTokens({ ...tokens, access_token: 'spoiled' });
    expect(await whoami(connected.client)).toEqual({ sub: user.id, client_id: clientId, scope: 'mcp:tools' });
  } finally {
    await connected.close();
  }
  const row = await t.db('oauth_clients').where({ client_id: clientId }).first();
  expect(row).toMatchObject({ type: 'confidential', token_endpoint_auth_method: 'private_key_jwt', jwks_uri: `${docs.origin}/keys.json` });
  expect(await t.db('audit_events').where({ type: 'oauth.client.auth_failed', client_id: clientId })).toHaveLength(0);
  // The key set was fetched once and served from the cache after.
  expect(docs.hits.get('/keys.json')).toBe(1);

  // Without an assertion the client is refused: a metadata document declaring private_key_jwt is not a public client.
  const refused = await request(t.app)
    .post('/api/oauth/token')
    .type('form')
    .send({ grant_type: 'refresh_token', refresh_token: provider.tokens()!.refresh_token!, client_id: clientId });
  expect(refused.status).toBe(401);
  expect(refused.body.error).toBe('invalid_client');
});

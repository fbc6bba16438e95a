import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Express } from 'express';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { heldPort } from './oauth';
import { loadEsm, signInAndApprove } from './oidc';

/**
 * CONTRACT §13 with the official TypeScript MCP SDK on both sides: examples/mcp-server (its server half, with our
 * RFC 9728 metadata and jose verification) and the SDK's Client + StreamableHTTPClientTransport with an
 * OAuthClientProvider (this file). The provider is what an MCP host (Claude Desktop, an IDE) implements: it keeps
 * client information, tokens and the PKCE verifier, and "opens the browser" by remembering the authorization URL,
 * which the test then walks through /login and /consent with the hosted HTML forms. Registration is whatever the SDK
 * chooses from our discovery document: CIMD when `clientMetadataUrl` is set and we advertise
 * client_id_metadata_document_supported, RFC 7591 registration when we advertise a registration_endpoint.
 */

type McpExample = {
  createMcpApp(options: { issuer: string; publicUrl: string; insecure: boolean }): Promise<{
    app: Express;
    resource: string;
    resourceMetadataUrl: string;
  }>;
  MCP_SCOPES: string[];
};
const mcpExample = loadEsm<McpExample>(path.join(__dirname, '../../examples/mcp-server/server.mjs'));

export const MCP_SCOPES: string[] = mcpExample.MCP_SCOPES;

export interface RunningMcpServer {
  /** `${origin}/mcp`: the URL clients connect to and the API resource identifier. */
  resource: string;
  resourceMetadataUrl: string;
  stop(): Promise<void>;
}

/** examples/mcp-server listening on 127.0.0.1, trusting the issuer at `issuer`. */
export async function startExampleMcpServer(issuer: string): Promise<RunningMcpServer> {
  const { server, port } = await heldPort('127.0.0.1');
  let made: Awaited<ReturnType<McpExample['createMcpApp']>>;
  try {
    made = await mcpExample.createMcpApp({ issuer, publicUrl: `http://127.0.0.1:${port}`, insecure: true });
  } catch (err) {
    server.close();
    throw err;
  }
  const { app, resource, resourceMetadataUrl } = made;
  server.on('request', app);
  return {
    resource,
    resourceMetadataUrl,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** An MCP host's OAuth state, in memory. */
export class InMemoryOAuthProvider implements OAuthClientProvider {
  /** Where the SDK sent "the browser" last. */
  authorizationUrl?: URL;
  /** Set: the SDK may use it as client_id (Client ID Metadata Document). */
  clientMetadataUrl?: string;
  private info?: OAuthClientInformationMixed;
  private saved?: OAuthTokens;
  private verifier?: string;
  private lastState?: string;
  /**
   * The SDK sends `state` only when its provider has this method (a host may leave it out: PKCE carries the CSRF
   * defence, CONTRACT §23); `sendState: false` builds such a provider.
   */
  readonly state?: () => string;

  constructor(private readonly options: { redirectUrl: string; clientName: string; clientMetadataUrl?: string; sendState?: boolean }) {
    this.clientMetadataUrl = options.clientMetadataUrl;
    if (options.sendState !== false) {
      this.state = () => {
        this.lastState = randomBytes(16).toString('base64url');
        return this.lastState;
      };
    }
  }

  get redirectUrl(): string {
    return this.options.redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.options.clientName,
      redirect_uris: [this.options.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  get expectedState(): string | undefined {
    return this.lastState;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.info;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.info = info;
  }

  tokens(): OAuthTokens | undefined {
    return this.saved;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }

  /** Test hook: replace the stored tokens (e.g. spoil the access token so that the next call has to refresh). */
  overwriteTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    this.authorizationUrl = authorizationUrl;
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.verifier = codeVerifier;
  }

  codeVerifier(): string {
    if (!this.verifier) throw new Error('no code verifier saved');
    return this.verifier;
  }
}

/** One HTTP exchange the SDK's transport made (its `fetch` option records them). */
export interface SeenResponse {
  method: string;
  url: string;
  status: number;
  wwwAuthenticate: string | null;
}

export function recordingFetch(seen: SeenResponse[]): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    seen.push({
      method: init?.method ?? 'GET',
      url: String(input instanceof Request ? input.url : input),
      status: response.status,
      wwwAuthenticate: response.headers.get('www-authenticate'),
    });
    return response;
  };
}

export interface ConnectedMcpClient {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** The authorization URL the SDK built (client_id, resource, PKCE, scope, state). */
  authorizationUrl: URL;
  /** Every response the MCP server gave the transport, in order. */
  seen: SeenResponse[];
  close(): Promise<void>;
}

/**
 * What an MCP host does the first time: connect, get 401 (the SDK discovers us through the WWW-Authenticate
 * resource_metadata and registers or uses its CIMD URL), send the user through sign-in and consent, finish the
 * authorization (code + PKCE + resource at our token endpoint), and connect again with the token.
 */
export async function connectWithSignIn(options: {
  mcpUrl: string;
  baseUrl: string;
  provider: InMemoryOAuthProvider;
  user: { email: string; password: string };
}): Promise<ConnectedMcpClient> {
  const seen: SeenResponse[] = [];
  const transportOptions = { authProvider: options.provider, fetch: recordingFetch(seen) };
  const first = new StreamableHTTPClientTransport(new URL(options.mcpUrl), transportOptions);
  const firstClient = new Client({ name: 'service-sso-test-host', version: '1.0.0' });
  let refused: unknown;
  try {
    await firstClient.connect(first);
  } catch (err) {
    refused = err;
  }
  if (!(refused instanceof UnauthorizedError)) throw new Error(`expected the SDK to need authorization, got ${String(refused)}`);
  const authorizationUrl = options.provider.authorizationUrl;
  if (!authorizationUrl) throw new Error('the SDK did not start an authorization');

  const { callback } = await signInAndApprove(options.baseUrl, authorizationUrl, options.user);
  if ((callback.searchParams.get('state') ?? undefined) !== options.provider.expectedState) throw new Error('state did not come back');
  const code = callback.searchParams.get('code');
  if (!code) throw new Error(`no code on the callback: ${callback.search}`);
  await first.finishAuth(code);
  await first.close().catch(() => {});

  const transport = new StreamableHTTPClientTransport(new URL(options.mcpUrl), transportOptions);
  const client = new Client({ name: 'service-sso-test-host', version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    transport,
    authorizationUrl,
    seen,
    close: async () => {
      await client.close().catch(() => {});
    },
  };
}

/** Calls `whoami` and returns what the server says the token stands for. */
export async function whoami(client: Client): Promise<{ sub: string; client_id: string; scope: string }> {
  const result = await client.callTool({ name: 'whoami', arguments: {} });
  if (result.isError) throw new Error(`whoami failed: ${JSON.stringify(result.content)}`);
  const [first] = result.content as Array<{ type: string; text?: string }>;
  return JSON.parse(first?.text ?? 'null') as { sub: string; client_id: string; scope: string };
}

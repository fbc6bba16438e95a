// An MCP server that lets service-sso decide who may call it (MCP authorization, 2025-11-25):
// - it publishes RFC 9728 protected-resource metadata naming service-sso as its authorization server;
// - a request without a valid token gets 401 with `WWW-Authenticate: Bearer resource_metadata="…"`, which is how an
//   MCP client discovers where to sign in;
// - it accepts only RFC 9068 access tokens (`typ: at+jwt`) whose `aud` is this server's resource identifier, verified
//   locally with jose against service-sso's JWKS (an id_token, a token for another API, or the spec's HS256 token
//   never passes);
// - one tool, `whoami`, answers with the token's sub, client_id and scope.
//
//   ISSUER=https://sso.example.com PUBLIC_URL=https://mcp.example.com PORT=8080 node server.mjs
//
// The resource identifier is `${PUBLIC_URL}/mcp`; register it in service-sso as an API resource (README.md).
import express from 'express';
import * as jose from 'jose';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { getOAuthProtectedResourceMetadataUrl } from '@modelcontextprotocol/sdk/server/auth/router.js';

/** The scopes this server defines (the API resource's `scopes` in service-sso). */
export const MCP_SCOPES = ['mcp:tools'];

/**
 * @param {{ issuer: string, publicUrl: string, insecure?: boolean }} options
 *   issuer: service-sso's issuer (OIDC_ISSUER / BASE_URL); publicUrl: where clients reach this server;
 *   insecure: allow an http issuer (local testing only).
 */
export async function createMcpApp({ issuer, publicUrl, insecure = false }) {
  const mcpUrl = new URL('/mcp', publicUrl);
  const resource = mcpUrl.href;
  const resourceMetadataUrl = getOAuthProtectedResourceMetadataUrl(mcpUrl);

  // OpenID Connect discovery names the JWKS; jose caches the keys and refetches on an unknown kid (key rotation).
  const metadata = await (await fetch(new URL('/.well-known/openid-configuration', issuer))).json();
  if (!insecure && !String(metadata.jwks_uri).startsWith('https:')) throw new Error('jwks_uri must be https');
  const jwks = jose.createRemoteJWKSet(new URL(metadata.jwks_uri));

  /** The SDK's OAuthTokenVerifier: RFC 9068 §4 checks, or InvalidTokenError (a 401 with WWW-Authenticate). */
  const verifier = {
    async verifyAccessToken(token) {
      try {
        const { payload } = await jose.jwtVerify(token, jwks, {
          issuer: metadata.issuer,
          audience: resource,
          typ: 'at+jwt',
          algorithms: ['RS256', 'ES256'],
          requiredClaims: ['sub', 'client_id', 'jti', 'exp', 'iat'],
        });
        return {
          token,
          clientId: String(payload.client_id),
          scopes: String(payload.scope ?? '')
            .split(' ')
            .filter(Boolean),
          expiresAt: payload.exp,
          resource: new URL(resource),
          extra: { sub: payload.sub },
        };
      } catch {
        throw new InvalidTokenError('The access token is not valid for this MCP server');
      }
    },
  };

  const app = express();
  app.disable('x-powered-by');

  // RFC 9728 §3: at the path-inserted well-known location of the resource.
  app.get(new URL(resourceMetadataUrl).pathname, (req, res) => {
    res.set('Access-Control-Allow-Origin', '*');
    res.json({
      resource,
      authorization_servers: [metadata.issuer],
      scopes_supported: MCP_SCOPES,
      bearer_methods_supported: ['header'],
      resource_name: 'service-sso example MCP server',
    });
  });

  const auth = requireBearerAuth({ verifier, requiredScopes: MCP_SCOPES, resourceMetadataUrl, expectedResource: mcpUrl });

  // Stateless Streamable HTTP: a fresh server and transport per request, so any instance can answer any call.
  app.post('/mcp', auth, express.json({ limit: '1mb' }), async (req, res) => {
    const server = new McpServer({ name: 'service-sso-example', version: '1.0.0' });
    server.registerTool(
      'whoami',
      { title: 'Who am I', description: 'Who the access token stands for: user id (sub), client and scopes' },
      async (extra) => {
        const info = extra.authInfo;
        const who = { sub: info?.extra?.sub, client_id: info?.clientId, scope: info?.scopes.join(' ') };
        return { content: [{ type: 'text', text: JSON.stringify(who) }] };
      },
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  // Stateless: no server-initiated stream and no session to end.
  app.get('/mcp', auth, (req, res) => res.status(405).set('Allow', 'POST').end());
  app.delete('/mcp', auth, (req, res) => res.status(405).set('Allow', 'POST').end());

  return { app, resource, resourceMetadataUrl };
}

// Run as a program (not when imported): no top-level await, so the module also loads through require().
if (import.meta.url === `file://${process.argv[1]}`) {
  (async () => {
    const { ISSUER, PUBLIC_URL, PORT = '8080' } = process.env;
    if (!ISSUER || !PUBLIC_URL) throw new Error('set ISSUER and PUBLIC_URL');
    const { app, resource } = await createMcpApp({ issuer: ISSUER, publicUrl: PUBLIC_URL, insecure: ISSUER.startsWith('http:') });
    app.listen(Number(PORT), () => console.log(`MCP server on ${resource} (port ${PORT})`));
  })().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}

// Baseline: node-oidc-provider 9 with its in-memory adapter, serving the same refresh_token grant with rotation.
// PKCE is required, tokens are minted through its own authorization code flow (the interaction below signs the
// bench account in and grants openid + offline_access without a page), and every refresh rotates the token.
// Usage: node oidc-provider.mjs PORT [DATABASE_URL]  — prints "listening" on stdout once it answers. With a database
// URL it keeps its tokens, grants, sessions and interactions in PostgreSQL instead (oidc-provider-pg-adapter.mjs).
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';
import Provider from 'oidc-provider';
import { pgAdapter } from './oidc-provider-pg-adapter.mjs';

const port = Number(process.argv[2] ?? 0);
const databaseUrl = process.argv[3];
const issuer = `http://127.0.0.1:${port}`;
export const CLIENT = {
  client_id: 'bench-client',
  client_secret: 'bench-client-secret-0123456789abcdef',
  redirect_uris: ['http://127.0.0.1:9/callback'],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'client_secret_basic',
};
/** The client_credentials baseline (issue 20): RFC 9068 JWT access tokens for one API, as this server issues them. */
export const CC_CLIENT = {
  client_id: 'bench-cc-client',
  client_secret: 'bench-cc-client-secret-0123456789abcdef',
  redirect_uris: [],
  grant_types: ['client_credentials'],
  response_types: [],
  token_endpoint_auth_method: 'client_secret_basic',
};
export const CC_RESOURCE = 'https://bench-api.example.test/';
const ACCOUNT = 'bench-account';

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const provider = new Provider(issuer, {
  ...(databaseUrl ? { adapter: await pgAdapter(databaseUrl) } : {}),
  clients: [CLIENT, CC_CLIENT],
  jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: 'bench', use: 'sig', alg: 'RS256' }] },
  cookies: { keys: [randomBytes(32).toString('hex')] },
  pkce: { required: () => true },
  rotateRefreshToken: () => true,
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    // Only CC_RESOURCE is known; a request without `resource` (the refresh baseline) is answered as before.
    resourceIndicators: {
      enabled: true,
      getResourceServerInfo: (_ctx, indicator) => {
        if (indicator !== CC_RESOURCE) throw new Provider.errors.InvalidTarget();
        return {
          scope: 'bench:read',
          audience: CC_RESOURCE,
          accessTokenTTL: 3600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub, email: 'bench@example.test' }) }),
});

async function interaction(req, res) {
  const details = await provider.interactionDetails(req, res);
  if (details.prompt.name === 'login') {
    await provider.interactionFinished(req, res, { login: { accountId: ACCOUNT } }, { mergeWithLastSubmission: false });
    return;
  }
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId: ACCOUNT, clientId: CLIENT.client_id });
  grant.addOIDCScope('openid offline_access');
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

const callback = provider.callback();
const server = http.createServer((req, res) => {
  if (req.url?.startsWith('/interaction/')) {
    interaction(req, res).catch((err) => {
      res.statusCode = 500;
      res.end(String(err?.message ?? err));
    });
    return;
  }
  callback(req, res);
});
server.listen(port, '127.0.0.1', () => process.stdout.write('listening\n'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));

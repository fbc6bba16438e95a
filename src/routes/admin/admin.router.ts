import { forbidden } from '../../errors';
import { getSummary } from '../../services/admin.service';
import { signInsPerDay } from '../../services/user-admin.service';
import { listSigningKeys, rotateSigningKey } from '../../services/oidc/signing-keys.service';
import { CLIENT_ACTIVATION_PERMISSION, hasPermission, SUPER_ADMIN } from '../../services/rbac-policy';
import * as clients from '../../services/oauth/clients.service';
import { recentBackchannelDeliveries } from '../../services/oidc/backchannel-logout.service';
import * as registrationTokens from '../../services/oauth/registration/registration-tokens.service';
import * as resources from '../../services/oauth/resources.service';
import { endpointsWith, routerOf, serve } from '../route';
import {
  presentApiResource,
  presentBackchannelDelivery,
  presentClient,
  presentRegistrationToken,
  presentSigningKey,
  presentSummary,
} from './admin.presenters';
import {
  apiResourceEnvelope,
  apiResourceIdParams,
  apiResourcesBody,
  backchannelDeliveriesBody,
  createApiResourceBody,
  updateApiResourceBody,
  clientEnvelope,
  clientIdParams,
  clientsBody,
  clientSecretBody,
  createClientBody,
  createdClientBody,
  createdRegistrationTokenBody,
  createRegistrationTokenBody,
  listClientsQuery,
  registrationTokenEnvelope,
  registrationTokenIdParams,
  registrationTokensBody,
  signingKeyRotatedBody,
  signingKeysBody,
  signInsPerDayBody,
  signInsQuery,
  summaryBody,
  updateClientBody,
} from '../../wire/admin/admin.schemas';

const READ = { auth: 'user', permission: 'oauth_clients:read' } as const;
const WRITE = { auth: 'user', permission: 'oauth_clients:write' } as const;
const forAdmins = endpointsWith({ auth: 'user', admin: true });
const read = endpointsWith(READ);
const write = endpointsWith(WRITE);
const readClient = endpointsWith({ ...READ, params: clientIdParams });
const writeResource = endpointsWith({ ...WRITE, params: apiResourceIdParams });
const oneClient = { description: '{ client }', schema: clientEnvelope };
const oneResource = { description: '{ resource }', schema: apiResourceEnvelope };

/** The overview's counts (spec §4.6) and sign-ins per day; the console's overview is built from them. */
export const summaryApi = {
  summary: forAdmins.get(
    '/summary',
    {
      summary: 'Counts of users, clients, roles, admins',
      response: { description: '{ users, active_users, clients, active_clients, roles, admins }', schema: summaryBody },
    },
    async (_input, ctx) => presentSummary(await getSummary(ctx)),
  ),
  signIns: forAdmins.get(
    '/summary/sign-ins',
    {
      summary: 'Successful and failed sign-ins per UTC day (today and the days before it), oldest first',
      description:
        'Counted from the audit trail (auth.login.succeeded and auth.login.failed): every day of the range has an entry, ' +
        'zero when nothing happened. `days` is 1 to 90 (default 30).',
      query: signInsQuery,
      noStore: true,
      response: { description: '{ days: [{ day, succeeded, failed }] }', schema: signInsPerDayBody },
    },
    async ({ query }, ctx) => ({ days: await signInsPerDay(ctx, query.days) }),
  ),
};

/**
 * The OpenID Connect signing keys (CONTRACT §9): reading them is the spec's "admin", rotating them super_admin's, like
 * `npm run admin -- rotate-signing-key` (the same service). The console's Signing keys page is built from these.
 */
export const signingKeysApi = {
  list: forAdmins.get(
    '/signing-keys',
    {
      summary: 'The published id_token and access-token signing keys, newest first, with their status (never a private key)',
      response: { description: '{ keys: [{ kid, alg, created_at, retired_at }] }', schema: signingKeysBody },
    },
    async (_input, ctx) => ({ keys: (await listSigningKeys(ctx)).map(presentSigningKey) }),
  ),
  rotate: endpointsWith({ auth: 'user', role: SUPER_ADMIN }).post(
    '/signing-keys/rotate',
    {
      summary: 'Rotate the signing key: a new current key; the old one stays published until its tokens have expired',
      noStore: true,
      response: { description: '{ kid, alg, retired }', schema: signingKeyRotatedBody },
    },
    async (_input, ctx) => rotateSigningKey(ctx),
  ),
};

/**
 * OAuth-client administration (spec §4.6). The client secret appears in create and rotate only, and those answers
 * are kept out of every cache (RFC 6749 §5.1 applies the same rule to tokens). The console's application pages are
 * built from these endpoints (src/console/applications/applications.console.ts).
 */
export const clientsApi = {
  list: read.get(
    '/oauth-clients',
    {
      summary: 'List OAuth clients (`?registration=dynamic`: those that registered themselves, CONTRACT §13)',
      query: listClientsQuery,
      response: { description: '{ clients }', schema: clientsBody },
    },
    async ({ query }, ctx) => ({ clients: (await clients.listClients(ctx, query)).map(presentClient) }),
  ),
  create: write.post(
    '/oauth-clients',
    {
      summary: 'Create a client; the secret is returned once',
      description:
        'CONTRACT §12: `type` confidential (default) or public (no secret, token_endpoint_auth_method none), `grant_types` ' +
        '(default authorization_code and refresh_token; client_credentials for confidential clients only; ' +
        'urn:ietf:params:oauth:grant-type:device_code), `allowed_resources` (registered API identifiers). `preset` (web, ' +
        'spa, native, m2m, device) fills in type, grant_types and scopes where the body leaves them out (docs/apps.md).',
      noStore: true,
      body: createClientBody,
      response: {
        status: 201,
        description: '{ client, client_secret } (no client_secret for a public client; Cache-Control: no-store)',
        schema: createdClientBody,
      },
    },
    async ({ body }, ctx) => {
      const { client, clientSecret } = await clients.createClient(ctx, body);
      return { client: presentClient(client), ...(clientSecret !== undefined ? { client_secret: clientSecret } : {}) };
    },
  ),
  get: readClient.get(
    '/oauth-clients/:clientId',
    { summary: 'Client detail (secret redacted)', response: oneClient },
    async ({ params }, ctx) => ({ client: presentClient(await clients.getClient(ctx, params.clientId)) }),
  ),
  update: endpointsWith({ ...WRITE, params: clientIdParams }).put(
    '/oauth-clients/:clientId',
    {
      summary: 'Update a client',
      description: '`is_active` (deactivate or re-activate) also needs `oauth_clients:delete`; 403 otherwise.',
      body: updateClientBody,
      response: oneClient,
    },
    async ({ params, body, principal }, ctx) => {
      // CONTRACT §23: deactivating or re-activating is DELETE's right, whichever endpoint carries it.
      if (body.isActive !== undefined && !hasPermission(principal, CLIENT_ACTIVATION_PERMISSION)) {
        throw forbidden(`Changing is_active requires permission ${CLIENT_ACTIVATION_PERMISSION}`);
      }
      return { client: presentClient(await clients.updateClient(ctx, params.clientId, body)) };
    },
  ),
  rotateSecret: endpointsWith({ auth: 'user', permission: 'oauth_clients:rotate_secret', params: clientIdParams }).post(
    '/oauth-clients/:clientId/rotate-secret',
    {
      summary: 'Rotate the secret (the old one stops working at once); 400 for a public client',
      noStore: true,
      response: { description: '{ client_id, client_secret } (Cache-Control: no-store)', schema: clientSecretBody },
    },
    async ({ params }, ctx) => {
      const rotated = await clients.rotateClientSecret(ctx, params.clientId);
      return { client_id: rotated.clientId, client_secret: rotated.clientSecret };
    },
  ),
  backchannelDeliveries: readClient.get(
    '/oauth-clients/:clientId/backchannel-logout-deliveries',
    {
      summary: "The client's 20 most recent back-channel logout deliveries, newest first",
      description:
        'OpenID Connect Back-Channel Logout (docs/backchannel-logout.md): one delivery per ended browser session under which ' +
        'the client held a session; pending while retried on the webhooks schedule, then delivered or failed.',
      response: { description: '{ deliveries }', schema: backchannelDeliveriesBody },
    },
    async ({ params }, ctx) => {
      await clients.getClient(ctx, params.clientId);
      return { deliveries: (await recentBackchannelDeliveries(ctx, params.clientId)).map(presentBackchannelDelivery) };
    },
  ),
  deactivate: endpointsWith({ auth: 'user', permission: 'oauth_clients:delete', params: clientIdParams }).delete(
    '/oauth-clients/:clientId',
    {
      summary: 'Deactivate a client and revoke its sessions',
      response: { description: '{ client } (is_active false)', schema: clientEnvelope },
    },
    async ({ params }, ctx) => ({ client: presentClient(await clients.deactivateClient(ctx, params.clientId)) }),
  ),
};

/** Initial access tokens of dynamic client registration (CONTRACT §13). */
export const registrationTokensApi = {
  list: read.get(
    '/registration-tokens',
    {
      summary: 'List initial access tokens for dynamic client registration (never the tokens themselves)',
      response: { description: '{ registration_tokens }', schema: registrationTokensBody },
    },
    async (_input, ctx) => ({ registration_tokens: (await registrationTokens.listTokens(ctx)).map(presentRegistrationToken) }),
  ),
  create: write.post(
    '/registration-tokens',
    {
      summary: 'Mint an initial access token for CLIENT_REGISTRATION=token; the token is returned once',
      description:
        'CONTRACT §13. `expires_in_s` (60 s to 90 days, default 1 day), `max_uses` (1-10000, default 1). A client sends it as ' +
        '`Authorization: Bearer <token>` to POST /api/oauth/register; each registration spends one use.',
      noStore: true,
      body: createRegistrationTokenBody,
      response: {
        status: 201,
        description: '{ token, registration_token } (Cache-Control: no-store)',
        schema: createdRegistrationTokenBody,
      },
    },
    async ({ body, principal }, ctx) => {
      const minted = await registrationTokens.mintRegistrationToken(ctx, principal, body);
      return { token: minted.token, registration_token: presentRegistrationToken(minted.row) };
    },
  ),
  revoke: endpointsWith({ ...WRITE, params: registrationTokenIdParams }).delete(
    '/registration-tokens/:tokenId',
    {
      summary: 'Revoke an initial access token (clients it registered stay; deactivate them as any client)',
      response: { description: '{ registration_token } (revoked_at set)', schema: registrationTokenEnvelope },
    },
    async ({ params }, ctx) => ({
      registration_token: presentRegistrationToken(await registrationTokens.revokeToken(ctx, params.tokenId)),
    }),
  ),
};

/** API resources (CONTRACT §12); the console's pages are built from them (src/console/resources/resources.console.ts). */
export const resourcesApi = {
  list: read.get(
    '/api-resources',
    {
      summary: 'List the APIs that accept RFC 9068 access tokens (RFC 8707 resources)',
      response: { description: '{ resources }', schema: apiResourcesBody },
    },
    async (_input, ctx) => ({ resources: (await resources.listResources(ctx)).map(presentApiResource) }),
  ),
  create: write.post(
    '/api-resources',
    {
      summary: 'Register an API (identifier: absolute URI, the aud of its tokens)',
      body: createApiResourceBody,
      response: { status: 201, ...oneResource },
      errors: [409],
    },
    async ({ body }, ctx) => ({ resource: presentApiResource(await resources.createApiResource(ctx, body)) }),
  ),
  get: endpointsWith({ ...READ, params: apiResourceIdParams }).get(
    '/api-resources/:resourceId',
    { summary: 'API resource detail', response: oneResource },
    async ({ params }, ctx) => ({ resource: presentApiResource(await resources.getApiResource(ctx, params.resourceId)) }),
  ),
  update: writeResource.put(
    '/api-resources/:resourceId',
    { summary: 'Update an API resource', body: updateApiResourceBody, response: oneResource, errors: [409] },
    async ({ params, body }, ctx) => ({ resource: presentApiResource(await resources.changeApiResource(ctx, params.resourceId, body)) }),
  ),
  remove: writeResource.delete(
    '/api-resources/:resourceId',
    {
      summary: 'Delete an API resource: tokens issued for it stop being active at introspection',
      response: { description: '{ resource } (as it was)', schema: apiResourceEnvelope },
    },
    async ({ params }, ctx) => ({ resource: presentApiResource(await resources.removeApiResource(ctx, params.resourceId)) }),
  ),
};

export const createAdminRouter = routerOf(
  (_ctx, deps) => [summaryApi, clientsApi, registrationTokensApi, resourcesApi, signingKeysApi].flatMap((api) => serve(deps, api)),
  { tags: ['Admin'] },
);

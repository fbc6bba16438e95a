import { getSummary } from '../../services/admin.service';
import * as clients from '../../services/oauth/clients.service';
import { declareRouter, route } from '../route';
import type { RouteDeps } from '../types';
import { presentClient, presentSummary } from './admin.presenters';
import {
  clientEnvelope,
  clientIdParams,
  clientsBody,
  clientSecretBody,
  createClientBody,
  createdClientBody,
  summaryBody,
  updateClientBody,
} from './admin.schemas';

/**
 * OAuth-client administration and summary (spec §4.6). The client secret appears in create and rotate only, and
 * those answers are kept out of every cache (RFC 6749 §5.1 applies the same rule to tokens).
 */
export function createAdminRouter(deps: RouteDeps) {
  const { ctx } = deps;
  return declareRouter(
    deps,
    [
      route(
        {
          method: 'get',
          path: '/summary',
          summary: 'Counts of users, clients, roles, admins',
          auth: 'user',
          admin: true,
          response: { description: '{ users, active_users, clients, active_clients, roles, admins }', schema: summaryBody },
        },
        async () => presentSummary(await getSummary(ctx)),
      ),
      route(
        {
          method: 'get',
          path: '/oauth-clients',
          summary: 'List OAuth clients',
          auth: 'user',
          permission: 'oauth_clients:read',
          response: { description: '{ clients }', schema: clientsBody },
        },
        async () => ({ clients: (await clients.listClients(ctx)).map(presentClient) }),
      ),
      route(
        {
          method: 'post',
          path: '/oauth-clients',
          summary: 'Create a client; the secret is returned once',
          auth: 'user',
          permission: 'oauth_clients:write',
          noStore: true,
          body: createClientBody,
          response: { status: 201, description: '{ client, client_secret } (Cache-Control: no-store)', schema: createdClientBody },
        },
        async ({ body }) => {
          const { client, clientSecret } = await clients.createClient(ctx, body);
          return { client: presentClient(client), client_secret: clientSecret };
        },
      ),
      route(
        {
          method: 'get',
          path: '/oauth-clients/:clientId',
          summary: 'Client detail (secret redacted)',
          auth: 'user',
          permission: 'oauth_clients:read',
          params: clientIdParams,
          response: { description: '{ client }', schema: clientEnvelope },
        },
        async ({ params }) => ({ client: presentClient(await clients.getClient(ctx, params.clientId)) }),
      ),
      route(
        {
          method: 'put',
          path: '/oauth-clients/:clientId',
          summary: 'Update a client',
          auth: 'user',
          permission: 'oauth_clients:write',
          params: clientIdParams,
          body: updateClientBody,
          response: { description: '{ client }', schema: clientEnvelope },
        },
        async ({ params, body }) => ({ client: presentClient(await clients.updateClient(ctx, params.clientId, body)) }),
      ),
      route(
        {
          method: 'post',
          path: '/oauth-clients/:clientId/rotate-secret',
          summary: 'Rotate the secret (the old one stops working at once)',
          auth: 'user',
          permission: 'oauth_clients:rotate_secret',
          noStore: true,
          params: clientIdParams,
          response: { description: '{ client_id, client_secret } (Cache-Control: no-store)', schema: clientSecretBody },
        },
        async ({ params }) => {
          const rotated = await clients.rotateClientSecret(ctx, params.clientId);
          return { client_id: rotated.clientId, client_secret: rotated.clientSecret };
        },
      ),
      route(
        {
          method: 'delete',
          path: '/oauth-clients/:clientId',
          summary: 'Deactivate a client and revoke its sessions',
          auth: 'user',
          permission: 'oauth_clients:delete',
          params: clientIdParams,
          response: { description: '{ client } (is_active false)', schema: clientEnvelope },
        },
        async ({ params }) => ({ client: presentClient(await clients.deactivateClient(ctx, params.clientId)) }),
      ),
    ],
    { tags: ['Admin'] },
  );
}

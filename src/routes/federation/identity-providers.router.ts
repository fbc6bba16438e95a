import * as providers from '../../services/federation/providers.service';
import { declareRouter, endpoint, serve } from '../route';
import type { RouteDeps } from '../types';
import { presentProvider } from './federation.presenters';
import { createProviderBody, providerEnvelope, providerIdParams, providersBody, updateProviderBody } from './identity-providers.schemas';

const guard = { auth: 'user', permission: 'system:manage_identity_providers' } as const;

/**
 * Upstream identity providers (CONTRACT §16), permission system:manage_identity_providers (CONTRACT §23). The client
 * secret is write-only; saving an OpenID provider fetches its discovery document and answers 400 validation_error
 * (details on `issuer`) when it is unreachable or names another issuer. The console's pages are built from these
 * endpoints (src/console/identity-providers/identity-providers.console.ts).
 */
export const identityProvidersApi = {
  list: endpoint(
    {
      ...guard,
      method: 'get',
      path: '/identity-providers',
      summary: 'List identity providers',
      response: { description: '{ providers }', schema: providersBody },
    },
    async (_input, ctx) => ({ providers: (await providers.listProviders(ctx)).map((p) => presentProvider(ctx.config, p)) }),
  ),
  create: endpoint(
    {
      ...guard,
      method: 'post',
      path: '/identity-providers',
      summary: 'Add an identity provider (OpenID Connect by issuer, a preset, or GitHub)',
      description: 'An `oidc` provider is validated when saved: its discovery document must be reachable and name exactly `issuer`.',
      noStore: true,
      body: createProviderBody,
      response: { status: 201, description: '{ provider }', schema: providerEnvelope },
      errors: [409],
    },
    async ({ body }, ctx) => ({ provider: presentProvider(ctx.config, await providers.createProvider(ctx, body)) }),
  ),
  get: endpoint(
    {
      ...guard,
      method: 'get',
      path: '/identity-providers/:providerId',
      summary: 'Identity provider detail (secret write-only)',
      params: providerIdParams,
      response: { description: '{ provider }', schema: providerEnvelope },
    },
    async ({ params }, ctx) => ({ provider: presentProvider(ctx.config, await providers.getProvider(ctx, params.providerId)) }),
  ),
  update: endpoint(
    {
      ...guard,
      method: 'put',
      path: '/identity-providers/:providerId',
      summary: 'Update an identity provider (an omitted client_secret is kept)',
      noStore: true,
      params: providerIdParams,
      body: updateProviderBody,
      response: { description: '{ provider }', schema: providerEnvelope },
      errors: [409],
    },
    async ({ params, body }, ctx) => ({
      provider: presentProvider(ctx.config, await providers.updateProvider(ctx, params.providerId, body)),
    }),
  ),
  remove: endpoint(
    {
      ...guard,
      method: 'delete',
      path: '/identity-providers/:providerId',
      summary: 'Delete an identity provider and unlink its identities',
      params: providerIdParams,
      response: { status: 204, description: 'Deleted', kind: 'empty' },
    },
    async ({ params }, ctx) => {
      await providers.deleteProvider(ctx, params.providerId);
    },
  ),
};

export function createIdentityProvidersRouter(deps: RouteDeps) {
  return declareRouter(deps, serve(deps, identityProvidersApi), { tags: ['Identity providers'] });
}

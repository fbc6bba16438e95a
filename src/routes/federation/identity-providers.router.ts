import * as providers from '../../services/federation/providers.service';
import { declareRouter, route } from '../route';
import type { RouteDeps } from '../types';
import { presentProvider } from './federation.presenters';
import { createProviderBody, providerEnvelope, providerIdParams, providersBody, updateProviderBody } from './identity-providers.schemas';

/**
 * Upstream identity providers (CONTRACT §16), permission system:manage_identity_providers (CONTRACT §23). The client
 * secret is write-only; saving an OpenID provider fetches its discovery document and answers 400 validation_error
 * (details on `issuer`) when it is unreachable or names another issuer.
 */
export function createIdentityProvidersRouter(deps: RouteDeps) {
  const { ctx } = deps;
  const present = (p: Parameters<typeof presentProvider>[1]) => presentProvider(ctx.config, p);
  const guard = { auth: 'user', permission: 'system:manage_identity_providers' } as const;
  return declareRouter(
    deps,
    [
      route(
        {
          ...guard,
          method: 'get',
          path: '/identity-providers',
          summary: 'List identity providers',
          response: { description: '{ providers }', schema: providersBody },
        },
        async () => ({ providers: (await providers.listProviders(ctx)).map(present) }),
      ),
      route(
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
        async ({ body }) => ({ provider: present(await providers.createProvider(ctx, body)) }),
      ),
      route(
        {
          ...guard,
          method: 'get',
          path: '/identity-providers/:providerId',
          summary: 'Identity provider detail (secret write-only)',
          params: providerIdParams,
          response: { description: '{ provider }', schema: providerEnvelope },
        },
        async ({ params }) => ({ provider: present(await providers.getProvider(ctx, params.providerId)) }),
      ),
      route(
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
        async ({ params, body }) => ({ provider: present(await providers.updateProvider(ctx, params.providerId, body)) }),
      ),
      route(
        {
          ...guard,
          method: 'delete',
          path: '/identity-providers/:providerId',
          summary: 'Delete an identity provider and unlink its identities',
          params: providerIdParams,
          response: { status: 204, description: 'Deleted', kind: 'empty' },
        },
        async ({ params }) => {
          await providers.deleteProvider(ctx, params.providerId);
        },
      ),
    ],
    { tags: ['Identity providers'] },
  );
}

import * as providers from '../../services/federation/providers.service';
import { endpointsWith, removed, servingRouter } from '../route';
import { presentProvider } from './federation.presenters';
import {
  createProviderBody,
  providerEnvelope,
  providerIdParams,
  providersBody,
  updateProviderBody,
} from '../../wire/federation/identity-providers.schemas';

const guard = { auth: 'user', permission: 'system:manage_identity_providers' } as const;
const guarded = endpointsWith(guard);
const aProvider = endpointsWith({ ...guard, params: providerIdParams });
const one = { description: '{ provider }', schema: providerEnvelope };

/**
 * Upstream identity providers (CONTRACT §16), permission system:manage_identity_providers (CONTRACT §23). The client
 * secret is write-only; saving an OpenID provider fetches its discovery document and answers 400 validation_error
 * (details on `issuer`) when it is unreachable or names another issuer. The console's pages are built from these
 * endpoints (src/console/identity-providers/identity-providers.console.ts).
 */
export const identityProvidersApi = {
  list: guarded.get(
    '/identity-providers',
    { summary: 'List identity providers', response: { description: '{ providers }', schema: providersBody } },
    async (_input, ctx) => ({ providers: (await providers.listProviders(ctx)).map((p) => presentProvider(ctx.config, p)) }),
  ),
  create: guarded.post(
    '/identity-providers',
    {
      summary: 'Add an identity provider (OpenID Connect by issuer, a preset, or GitHub)',
      description: 'An `oidc` provider is validated when saved: its discovery document must be reachable and name exactly `issuer`.',
      noStore: true,
      body: createProviderBody,
      response: { status: 201, ...one },
      errors: [409],
    },
    async ({ body }, ctx) => ({ provider: presentProvider(ctx.config, await providers.createProvider(ctx, body)) }),
  ),
  get: aProvider.get(
    '/identity-providers/:providerId',
    { summary: 'Identity provider detail (secret write-only)', response: one },
    async ({ params }, ctx) => ({ provider: presentProvider(ctx.config, await providers.getProvider(ctx, params.providerId)) }),
  ),
  update: aProvider.put(
    '/identity-providers/:providerId',
    {
      summary: 'Update an identity provider (an omitted client_secret is kept)',
      noStore: true,
      body: updateProviderBody,
      response: one,
      errors: [409],
    },
    async ({ params, body }, ctx) => ({
      provider: presentProvider(ctx.config, await providers.updateProvider(ctx, params.providerId, body)),
    }),
  ),
  remove: aProvider.delete(
    '/identity-providers/:providerId',
    { summary: 'Delete an identity provider and unlink its identities', response: removed('Deleted') },
    async ({ params }, ctx) => providers.deleteProvider(ctx, params.providerId),
  ),
};

export const createIdentityProvidersRouter = servingRouter(identityProvidersApi, { tags: ['Identity providers'] });

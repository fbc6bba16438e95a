import { PROVIDER_PRESETS } from '../../declarations/identity-providers';
import { withTransaction } from '../../db';
import { randomUUID } from 'node:crypto';
import { isUniqueViolation } from '../../db/pg-errors';
import {
  deleteIdentityProvider,
  findIdentityProviderById,
  insertIdentityProvider,
  listIdentityProviders,
  updateIdentityProvider,
  type IdentityProviderFields,
  type IdentityProviderRow,
  type IdentityProviderType,
} from '../../db/repositories/identity-providers.repo';
import { AppError, badRequest, conflict, found, notFound, type Said } from '../../errors';
import { say } from '../../i18n';
import type { ServiceContext } from '../context';
import {
  clientSecretPurpose,
  discoverOidc,
  GITHUB_DEFAULTS,
  OIDC_DEFAULT_SCOPES,
  outboundRefusalOf,
  upstreamRulesOf,
} from './relying-party';

/**
 * Upstream identity providers as admins configure them (CONTRACT §16, GET|POST|PUT|DELETE
 * /api/admin/identity-providers). The client secret is write-only: sealed at rest with KEYS_SECRET, opened only to
 * talk to the provider. An OpenID provider is checked when it is saved: its discovery document must be reachable and
 * name exactly the configured issuer.
 */

/** Presets (the console's buttons, and `preset` in the API): OpenID providers with their issuer filled in. */
export { PROVIDER_PRESETS };

export type ProviderPreset = keyof typeof PROVIDER_PRESETS;
export const PRESET_NAMES = ['google', 'microsoft', 'gitlab', 'github'] as const satisfies readonly ProviderPreset[];

export interface ProviderInput {
  preset?: ProviderPreset;
  slug: string;
  name?: string;
  type?: IdentityProviderType;
  issuer?: string;
  baseUrl?: string;
  apiBaseUrl?: string;
  clientId: string;
  clientSecret?: string;
  scopes?: string;
  enabled?: boolean;
  trustEmail?: boolean;
  allowSignup?: boolean;
}

export type ProviderPatch = Partial<Omit<ProviderInput, 'preset'>>;

/** A refusal of `path`: its English message (the API's) and the catalogue key the console shows (`said`). */
const invalid = (path: string, words: { message: string; said?: Said }) => badRequest(words.message, [{ path, ...words }]);

/** An issuer as OpenID Connect wants it: https (http only with idp_allow_private), no query or fragment, no trailing slash. */
function normalizeIssuer(ctx: ServiceContext, issuer: string): string {
  const url = new URL(issuer);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && ctx.settings.current.values.idp_allow_private)) {
    throw invalid('issuer', say('issuerHttps'));
  }
  if (url.search || url.hash) throw invalid('issuer', say('issuerQuery'));
  return issuer.replace(/\/+$/, '');
}

/**
 * Saving an OpenID provider proves its configuration: the discovery document is fetched (through the outbound
 * module) and openid-client checks that its `issuer` is exactly the configured one.
 */
async function validateOidcIssuer(ctx: ServiceContext, issuer: string, clientId: string): Promise<void> {
  try {
    await discoverOidc(upstreamRulesOf(ctx), issuer, clientId, undefined);
  } catch (err) {
    const discoveryUrl = `${issuer}/.well-known/openid-configuration`;
    const refused = outboundRefusalOf(err);
    if (refused) {
      const url = discoveryUrl;
      if (refused.reason === 'refused_address') throw invalid('issuer', say('discoveryAddress', { url, host: new URL(url).hostname }));
      if (refused.reason === 'timeout') throw invalid('issuer', say('discoveryTimeout', { url }));
      const message = `The discovery document ${url} could not be fetched: ${refused.message}`;
      throw invalid('issuer', { message, said: say('discoveryUnreachable', { url }).said });
    }
    const e = err as { code?: string; message?: string; cause?: { status?: number } };
    if (e.code === 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED') {
      throw invalid('issuer', say('discoveryOtherIssuer', { url: discoveryUrl }));
    }
    if (e.code === 'OAUTH_RESPONSE_IS_NOT_CONFORM') {
      const message = `${discoveryUrl} did not answer with a discovery document (${e.message ?? 'unexpected answer'})`;
      throw invalid('issuer', { message, said: say('discoveryNotADocument', { url: discoveryUrl }).said });
    }
    const message = `The discovery document ${discoveryUrl} could not be used: ${e.message ?? 'unknown error'}`;
    throw invalid('issuer', { message, said: say('discoveryUnusable', { url: discoveryUrl }).said });
  }
}

function baseUrlField(path: string, value: string | undefined): string | null {
  if (value === undefined) return null;
  const url = new URL(value);
  if (url.search || url.hash) throw invalid(path, say('urlNoQuery'));
  return value.replace(/\/+$/, '');
}

/** The row's fields from a complete input; checks the rules that span fields and the OpenID discovery. */
async function fieldsOf(
  ctx: ServiceContext,
  input: ProviderInput,
  existing?: IdentityProviderRow,
): Promise<Omit<IdentityProviderFields, 'clientSecretSealed'>> {
  const preset = input.preset ? PROVIDER_PRESETS[input.preset] : undefined;
  const type = input.type ?? preset?.type ?? existing?.type;
  if (!type) throw invalid('type', say('providerType'));
  if (preset && preset.type !== type) throw invalid('type', say('providerPresetType', { preset: input.preset ?? '', type: preset.type }));
  const name = input.name ?? preset?.name ?? existing?.name;
  if (!name) throw invalid('name', say('providerNameRequired'));
  const scopes = input.scopes ?? existing?.scopes ?? preset?.scopes ?? (type === 'oidc' ? OIDC_DEFAULT_SCOPES : GITHUB_DEFAULTS.scopes);
  let issuer: string | null = null;
  let baseUrl: string | null = null;
  let apiBaseUrl: string | null = null;
  if (type === 'oidc') {
    if (input.baseUrl !== undefined || input.apiBaseUrl !== undefined) throw invalid('base_url', say('providerGithubUrls'));
    const raw = input.issuer ?? preset?.issuer ?? existing?.issuer ?? undefined;
    if (!raw) {
      throw invalid('issuer', say(input.preset === 'microsoft' ? 'issuerMicrosoft' : 'issuerRequired'));
    }
    issuer = normalizeIssuer(ctx, raw);
    if (!scopes.split(' ').includes('openid')) throw invalid('scopes', say('providerOpenidScope'));
  } else {
    if (input.issuer !== undefined) throw invalid('issuer', say('providerGithubIssuer'));
    baseUrl = baseUrlField('base_url', input.baseUrl) ?? existing?.baseUrl ?? GITHUB_DEFAULTS.baseUrl;
    apiBaseUrl = baseUrlField('api_base_url', input.apiBaseUrl) ?? existing?.apiBaseUrl ?? GITHUB_DEFAULTS.apiBaseUrl;
  }
  return {
    slug: input.slug,
    name,
    type,
    issuer,
    baseUrl,
    apiBaseUrl,
    clientId: input.clientId,
    scopes,
    enabled: input.enabled ?? existing?.enabled ?? true,
    trustEmail: input.trustEmail ?? existing?.trustEmail ?? false,
    allowSignup: input.allowSignup ?? existing?.allowSignup ?? true,
  };
}

export async function listProviders(ctx: ServiceContext): Promise<IdentityProviderRow[]> {
  return listIdentityProviders(ctx.db);
}

/** The providers /login offers ("Continue with {name}"). */
export async function listEnabledProviders(ctx: ServiceContext): Promise<IdentityProviderRow[]> {
  return listIdentityProviders(ctx.db, { enabledOnly: true });
}

export async function getProvider(ctx: ServiceContext, id: string): Promise<IdentityProviderRow> {
  return found(await findIdentityProviderById(ctx.db, id), 'Identity provider');
}

function slugTaken(err: unknown): AppError | unknown {
  return isUniqueViolation(err) ? conflict(say('providerSlugTaken')) : err;
}

export async function createProvider(ctx: ServiceContext, input: ProviderInput): Promise<IdentityProviderRow> {
  const fields = await fieldsOf(ctx, input);
  const clientSecret = input.clientSecret;
  if (!clientSecret) throw invalid('client_secret', say('providerSecretRequired'));
  // fieldsOf gives an OpenID Connect provider its issuer, and a GitHub one none.
  if (fields.issuer) await validateOidcIssuer(ctx, fields.issuer, fields.clientId);
  const id = randomUUID();
  try {
    return await withTransaction(ctx.db, async (trx) => {
      const provider = await insertIdentityProvider(
        trx,
        id,
        { ...fields, clientSecretSealed: ctx.sealer.seal(clientSecret, clientSecretPurpose(id)) },
        ctx.clock.now(),
      );
      await ctx.events.record(trx, {
        type: 'idp.provider.created',
        detail: { provider_id: id, slug: provider.slug, provider_type: provider.type },
      });
      return provider;
    });
  } catch (err) {
    throw slugTaken(err);
  }
}

/** PUT: the fields sent replace the stored ones; an omitted client_secret keeps the stored one. */
export async function updateProvider(ctx: ServiceContext, id: string, patch: ProviderPatch): Promise<IdentityProviderRow> {
  const existing = await getProvider(ctx, id);
  if (patch.type !== undefined && patch.type !== existing.type) throw invalid('type', say('providerTypeFixed'));
  const fields = await fieldsOf(
    ctx,
    { ...patch, slug: patch.slug ?? existing.slug, clientId: patch.clientId ?? existing.clientId },
    existing,
  );
  if (fields.issuer) await validateOidcIssuer(ctx, fields.issuer, fields.clientId);
  try {
    return await withTransaction(ctx.db, async (trx) => {
      const updated = found(
        await updateIdentityProvider(
          trx,
          id,
          {
            ...fields,
            ...(patch.clientSecret ? { clientSecretSealed: ctx.sealer.seal(patch.clientSecret, clientSecretPurpose(id)) } : {}),
          },
          ctx.clock.now(),
        ),
        'Identity provider',
      );
      await ctx.events.record(trx, {
        type: 'idp.provider.changed',
        detail: {
          provider_id: id,
          slug: updated.slug,
          fields: Object.keys(patch).filter((k) => k !== 'clientSecret'),
          credential_replaced: Boolean(patch.clientSecret),
        },
      });
      return updated;
    });
  } catch (err) {
    throw slugTaken(err);
  }
}

/** Deleting a provider unlinks every identity of it (disable it instead to keep them). */
export async function deleteProvider(ctx: ServiceContext, id: string): Promise<void> {
  const existing = await getProvider(ctx, id);
  await withTransaction(ctx.db, async (trx) => {
    if (!(await deleteIdentityProvider(trx, id))) throw notFound('Identity provider');
    await ctx.events.record(trx, { type: 'idp.provider.deleted', detail: { provider_id: id, slug: existing.slug } });
  });
}

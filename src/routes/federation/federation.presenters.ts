import type { Config } from '../../config';
import type { IdentityProviderRow } from '../../db/repositories/identity-providers.repo';
import type { LinkedIdentity } from '../../db/repositories/user-identities.repo';
import { callbackUrlOf } from '../../services/federation/relying-party';

/** An identity provider as admins see it, field by field: the client secret (sealed) never appears (CONTRACT §16). */
export function presentProvider(config: Pick<Config, 'baseUrl'>, p: IdentityProviderRow) {
  return {
    id: p.id,
    slug: p.slug,
    name: p.name,
    type: p.type,
    issuer: p.issuer,
    base_url: p.baseUrl,
    api_base_url: p.apiBaseUrl,
    client_id: p.clientId,
    has_client_secret: p.clientSecretSealed !== null,
    scopes: p.scopes,
    enabled: p.enabled,
    trust_email: p.trustEmail,
    allow_signup: p.allowSignup,
    callback_url: callbackUrlOf(config, p.slug),
    created_at: p.createdAt.toISOString(),
    updated_at: p.updatedAt.toISOString(),
  };
}

export function startUrlOf(slug: string, returnTo?: string): string {
  return `/api/auth/idp/${encodeURIComponent(slug)}/start${returnTo ? `?${new URLSearchParams({ return_to: returnTo })}` : ''}`;
}

export function presentPublicProvider(config: Pick<Config, 'baseUrl'>, p: IdentityProviderRow) {
  return { slug: p.slug, name: p.name, type: p.type, start_url: `${config.baseUrl}${startUrlOf(p.slug)}` };
}

export function presentIdentity(i: LinkedIdentity) {
  return {
    id: i.id,
    provider: { slug: i.providerSlug, name: i.providerName },
    email: i.email,
    created_at: i.createdAt.toISOString(),
    last_used_at: i.lastUsedAt?.toISOString() ?? null,
    needs_confirmation: i.needsConfirmation,
  };
}

import { z } from 'zod';
import { GITHUB_DEFAULTS, OIDC_DEFAULT_SCOPES, PROVIDER_PRESETS } from '../../declarations/identity-providers';
import type { IdentityProvider } from '../../wire/federation/identity-providers.schemas';
import { PROVIDER_KINDS, type ProviderKind, type ProviderValues } from '../../views/console/identity-providers';
import { checkbox, formMapping, text } from '../action';

/**
 * The identity provider form (CONTRACT §16): its fields, as the API's bodies and from its wire shape. The client
 * secret is write-only: never shown, not even after a refused post.
 */
const providerForm = z.object({
  kind: text(20),
  slug: text(100),
  name: text(300),
  issuer: text(600),
  base_url: text(600),
  api_base_url: text(600),
  client_id: text(600),
  client_secret: text(2100),
  scopes: text(600),
  enabled: checkbox(),
  trust_email: checkbox(),
  allow_signup: checkbox(),
});
type ProviderForm = z.output<typeof providerForm>;

export const asKind = (v: string): ProviderKind | undefined => PROVIDER_KINDS.find((k) => k === v);
export const kindOf = (p: IdentityProvider): ProviderKind => (p.type === 'github' ? 'github' : 'oidc');

/** Sent even when empty (the API names what is missing). */
const ALWAYS = new Set(['slug', 'client_id']);
/**
 * The fields both API bodies share, as the form sends them: an empty optional field is left to the API's default (a
 * GitHub form has no issuer field, an OpenID one no base URLs; an empty secret keeps the one stored).
 */
const asBody = ({ kind: _kind, ...f }: ProviderForm) =>
  Object.fromEntries(Object.entries(f).filter(([k, v]) => ALWAYS.has(k) || typeof v !== 'string' || v.trim() !== ''));
export const createBody = formMapping({
  form: providerForm,
  input: (f) => ({ ...asBody(f), ...(f.kind === 'oidc' || !asKind(f.kind) ? { type: 'oidc' } : { preset: f.kind }) }),
  field: 'slug',
});
export const updateBody = formMapping({ form: providerForm, input: asBody, field: 'slug' });

/** A new provider's form, prefilled from the preset it starts from. */
export function newValues(kind: ProviderKind): ProviderValues {
  const preset = kind === 'oidc' ? undefined : PROVIDER_PRESETS[kind];
  const github = kind === 'github';
  return {
    kind,
    slug: kind === 'oidc' ? '' : kind,
    name: preset?.name ?? '',
    issuer: preset?.issuer ?? '',
    base_url: github ? GITHUB_DEFAULTS.baseUrl : '',
    api_base_url: github ? GITHUB_DEFAULTS.apiBaseUrl : '',
    client_id: '',
    scopes: preset?.scopes ?? OIDC_DEFAULT_SCOPES,
    enabled: true,
    trust_email: false,
    allow_signup: true,
  };
}

export const valuesOf = (p: IdentityProvider): ProviderValues => ({
  ...p,
  kind: kindOf(p),
  issuer: p.issuer ?? '',
  base_url: p.base_url ?? '',
  api_base_url: p.api_base_url ?? '',
});

/** What was typed, shown again after a refusal: never the client secret (write-only). */
export const formValues = ({ client_secret: _secret, ...f }: ProviderForm, kind: ProviderKind): ProviderValues => ({ ...f, kind });

import { z } from 'zod';
import { PRESET_NAMES } from '../../services/federation/providers.service';
import { nameField, timestampFields, uuidField } from '../common.schemas';

/** CONTRACT §16 request and response bodies of /api/admin/identity-providers and the user-facing federation routes. */

export const providerIdParams = z.object({ providerId: uuidField('providerId') });

const slugField = z
  .string({ error: 'slug is required' })
  .trim()
  .regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'slug must be 1-40 lower-case letters, digits or dashes, starting with a letter or digit');

const httpUrl = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .trim()
    .max(500, `${field} is too long`)
    .pipe(z.url({ protocol: /^https?$/, error: `${field} must be an http(s) URL` }));

const scopesField = z
  .string({ error: 'scopes must be a space-separated string' })
  .max(500, 'scopes is too long')
  .transform((v) => v.split(/\s+/).filter(Boolean).join(' '))
  .pipe(
    z
      .string()
      .min(1, 'at least one scope is required')
      .regex(/^[\x21\x23-\x5b\x5d-\x7e ]+$/, 'scopes must be RFC 6749 scope tokens'),
  );

const fields = {
  slug: slugField,
  name: nameField('name'),
  type: z.enum(['oidc', 'github'], { error: 'type must be "oidc" or "github"' }),
  issuer: httpUrl('issuer'),
  base_url: httpUrl('base_url'),
  api_base_url: httpUrl('api_base_url'),
  client_id: z.string({ error: 'client_id is required' }).trim().min(1, 'client_id is required').max(500, 'client_id is too long'),
  client_secret: z
    .string({ error: 'client_secret is required and must be a string' })
    .min(1, 'client_secret must not be empty')
    .max(2000, 'client_secret is too long'),
  scopes: scopesField,
  enabled: z.boolean({ error: 'enabled must be a boolean' }),
  trust_email: z.boolean({ error: 'trust_email must be a boolean' }),
  allow_signup: z.boolean({ error: 'allow_signup must be a boolean' }),
};

const toInput = <T extends Partial<{ [K in keyof typeof fields]: z.output<(typeof fields)[K]> }>>(b: T) => ({
  slug: b.slug,
  name: b.name,
  type: b.type,
  issuer: b.issuer,
  baseUrl: b.base_url,
  apiBaseUrl: b.api_base_url,
  clientId: b.client_id,
  clientSecret: b.client_secret,
  scopes: b.scopes,
  enabled: b.enabled,
  trustEmail: b.trust_email,
  allowSignup: b.allow_signup,
});

export const createProviderBody = z
  .strictObject({
    preset: z.enum(PRESET_NAMES, { error: `preset must be one of: ${PRESET_NAMES.join(', ')}` }).optional(),
    slug: fields.slug,
    name: fields.name.optional(),
    type: fields.type.optional(),
    issuer: fields.issuer.optional(),
    base_url: fields.base_url.optional(),
    api_base_url: fields.api_base_url.optional(),
    client_id: fields.client_id,
    client_secret: fields.client_secret,
    scopes: fields.scopes.optional(),
    enabled: fields.enabled.optional(),
    trust_email: fields.trust_email.optional(),
    allow_signup: fields.allow_signup.optional(),
  })
  .transform((b) => ({ ...toInput(b), slug: b.slug, clientId: b.client_id, preset: b.preset }));

export const updateProviderBody = z
  .strictObject({
    slug: fields.slug.optional(),
    name: fields.name.optional(),
    type: fields.type.optional(),
    issuer: fields.issuer.optional(),
    base_url: fields.base_url.optional(),
    api_base_url: fields.api_base_url.optional(),
    client_id: fields.client_id.optional(),
    client_secret: fields.client_secret.optional(),
    scopes: fields.scopes.optional(),
    enabled: fields.enabled.optional(),
    trust_email: fields.trust_email.optional(),
    allow_signup: fields.allow_signup.optional(),
  })
  .transform((b) => Object.fromEntries(Object.entries(toInput(b)).filter(([, v]) => v !== undefined)));

export const providerBody = z
  .strictObject({
    id: z.string(),
    slug: z.string(),
    name: z.string(),
    type: z.enum(['oidc', 'github']),
    issuer: z.string().nullable(),
    base_url: z.string().nullable(),
    api_base_url: z.string().nullable(),
    client_id: z.string(),
    has_client_secret: z.boolean().meta({ description: 'The secret itself is write-only' }),
    scopes: z.string(),
    enabled: z.boolean(),
    trust_email: z.boolean(),
    allow_signup: z.boolean(),
    callback_url: z.string().meta({ description: 'The redirect URI to register at the provider' }),
    ...timestampFields,
  })
  .meta({ id: 'IdentityProvider' });

export const providerEnvelope = z.strictObject({ provider: providerBody });
export const providersBody = z.strictObject({ providers: z.array(providerBody) });
export type IdentityProvider = z.output<typeof providerBody>;

export const slugParams = z.object({ slug: z.string().min(1).max(40) });

export const startQuery = z.object({
  return_to: z.string().max(4096, 'return_to is too long').optional(),
});

export const publicProvidersBody = z.strictObject({
  providers: z.array(z.strictObject({ slug: z.string(), name: z.string(), type: z.enum(['oidc', 'github']), start_url: z.string() })),
});

export const identityParams = z.object({ id: uuidField('id') });

export const identitiesBody = z.strictObject({
  identities: z.array(
    z.strictObject({
      id: z.string(),
      provider: z.strictObject({ slug: z.string(), name: z.string() }),
      email: z.string().nullable(),
      created_at: z.iso.datetime(),
      last_used_at: z.iso.datetime().nullable(),
      needs_confirmation: z.boolean().meta({
        description:
          "Linked to an administrator's account under the rules before the fourth review: it signs nobody in until the owner " +
          'confirms it by signing in with it from /account (docs/security.md)',
      }),
    }),
  ),
});

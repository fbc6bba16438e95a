import { z } from 'zod';
import { checkRedirectUri } from '../../lib/redirect-uri';
import { SUPPORTED_SCOPES } from '../../services/oauth/client-secrets';
import { nameField, timestampFields } from '../common.schemas';

export const clientIdParams = z.object({
  clientId: z.string().min(1, 'clientId is required').max(200, 'clientId is too long'),
});

/** Every rule of checkRedirectUri but plain http, which depends on ALLOW_HTTP_REDIRECT_URIS (clients.service checks it). */
const redirectUriField = z.string({ error: 'redirect URI must be a string' }).superRefine((uri, ctx) => {
  const check = checkRedirectUri(uri, { allowHttp: true });
  if (!check.ok) ctx.addIssue({ code: 'custom', message: check.reason });
});

const redirectUrisField = z
  .array(redirectUriField, { error: 'redirect_uris must be an array of strings' })
  .min(1, 'at least one redirect URI is required')
  .max(20, 'at most 20 redirect URIs');

/** CONTRACT §6: a space-separated string or an array, each within the spec's six (spec §5.9); kept in catalogue order. */
const scopesField = z
  .union([z.string().max(500), z.array(z.string().max(50)).max(20)], { error: 'scopes must be a string or an array of strings' })
  .transform((v) => (typeof v === 'string' ? v.split(/\s+/).filter(Boolean) : v))
  .pipe(
    z
      .array(z.enum(SUPPORTED_SCOPES, { error: `each scope must be one of: ${SUPPORTED_SCOPES.join(', ')}` }))
      .min(1, 'at least one scope is required'),
  )
  .transform((scopes) => SUPPORTED_SCOPES.filter((s) => scopes.includes(s)));

/** CONTRACT §9: OIDC post-logout redirect URIs, under the same rules as redirect URIs; may be empty. */
const postLogoutRedirectUrisField = z
  .array(redirectUriField, { error: 'post_logout_redirect_uris must be an array of strings' })
  .max(20, 'at most 20 post-logout redirect URIs')
  .transform((uris) => [...new Set(uris)]);

const clientFields = {
  name: nameField('name'),
  redirect_uri: redirectUriField.optional(),
  redirect_uris: redirectUrisField.optional(),
  scopes: scopesField.optional(),
  post_logout_redirect_uris: postLogoutRedirectUrisField.optional(),
  is_active: z.boolean({ error: 'is_active must be a boolean' }).optional(),
};

/** `redirect_uri` (one) and `redirect_uris` may both be given; the union is registered, in order. */
function mergeRedirectUris(b: { redirect_uri?: string; redirect_uris?: string[] }): string[] | undefined {
  if (b.redirect_uri === undefined && b.redirect_uris === undefined) return undefined;
  return [...new Set([...(b.redirect_uri !== undefined ? [b.redirect_uri] : []), ...(b.redirect_uris ?? [])])];
}

/** Scopes a client gets when created without `scopes`. */
export const DEFAULT_CLIENT_SCOPES = ['openid', 'profile', 'email'];

export const createClientBody = z
  .object(clientFields)
  .refine((b) => b.redirect_uri !== undefined || b.redirect_uris !== undefined, {
    message: 'redirect_uri or redirect_uris is required',
    path: ['redirect_uris'],
  })
  .transform((b) => ({
    name: b.name,
    redirectUris: mergeRedirectUris(b) ?? [],
    scopes: b.scopes ?? DEFAULT_CLIENT_SCOPES,
    postLogoutRedirectUris: b.post_logout_redirect_uris ?? [],
    isActive: b.is_active,
  }));

export const updateClientBody = z
  .object({ ...clientFields, name: clientFields.name.optional() })
  .refine((b) => Object.values(b).some((v) => v !== undefined), { message: 'Nothing to update' })
  .transform((b) => ({
    name: b.name,
    redirectUris: mergeRedirectUris(b),
    scopes: b.scopes,
    postLogoutRedirectUris: b.post_logout_redirect_uris,
    isActive: b.is_active,
  }));

/** OAuth client (CONTRACT §6): never the secret or its hash. */
export const clientBody = z
  .strictObject({
    client_id: z.string(),
    name: z.string(),
    redirect_uris: z.array(z.string().meta({ format: 'uri' })),
    scopes: z.array(z.string()),
    post_logout_redirect_uris: z.array(z.string().meta({ format: 'uri' })),
    is_active: z.boolean(),
    ...timestampFields,
  })
  .meta({ id: 'OAuthClient' });

export const clientEnvelope = z.strictObject({ client: clientBody });

export const clientsBody = z.strictObject({ clients: z.array(clientBody) });

export const createdClientBody = z.strictObject({ client: clientBody, client_secret: z.string() });

export const clientSecretBody = z.strictObject({ client_id: z.string(), client_secret: z.string() });

export const summaryBody = z.strictObject({
  users: z.number().int(),
  active_users: z.number().int(),
  clients: z.number().int(),
  active_clients: z.number().int(),
  roles: z.number().int(),
  admins: z.number().int(),
});

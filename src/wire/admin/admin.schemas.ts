import { z } from 'zod';
import { sayIssue } from '../../i18n';
import { checkRedirectUri } from '../../lib/redirect-uri';
import { SUPPORTED_SCOPES } from '../../services/oauth/client-secrets';
import { CLIENT_TYPES, DEFAULT_GRANT_TYPES, GRANT_TYPES, type ClientType } from '../../declarations/client-policy';
import { CLIENT_PRESETS, PRESETS, type ClientPreset } from '../../declarations/client-presets';
import { checkJwks } from '../../services/oauth/client-keys';
import { isResourceIdentifier } from '../../services/oauth/resource-resolver';
import { webOrigins } from '../../declarations/settings';
import { nameField, timestampField, timestampFields, updateBody } from '../common.schemas';

/** Issue 34: how an admin-registered client authenticates (client_secret_post is accepted from every secret client). */
export const CLIENT_AUTH_METHODS = ['client_secret_basic', 'private_key_jwt', 'none'] as const;

export const clientIdParams = z.object({
  // A Client ID Metadata Document client's id is its URL (CONTRACT §13), percent-encoded in the path.
  clientId: z.string().min(1, 'clientId is required').max(2048, 'clientId is too long'),
});

/**
 * Every rule of checkRedirectUri but plain http, which depends on ALLOW_HTTP_REDIRECT_URIS, and private-use schemes,
 * which depend on the client type (clients.service checks both).
 */
export const redirectUriField = z.string({ error: 'redirect URI must be a string' }).superRefine((uri, ctx) => {
  const check = checkRedirectUri(uri, { allowHttp: true, allowPrivateUse: true });
  // The catalogue key goes with the issue, for the console (src/i18n saidOfIssue).
  if (!check.ok) ctx.addIssue({ code: 'custom', message: check.reason, params: { said: check.said } });
});

export const redirectUrisField = z
  .array(redirectUriField, { error: 'redirect_uris must be an array of strings' })
  .max(20, 'at most 20 redirect URIs');

/** CONTRACT §12 (and the grant_types of an RFC 7591 registration, CONTRACT §13). */
export const grantTypesField = z
  .array(z.enum(GRANT_TYPES, { error: `each grant type must be one of: ${GRANT_TYPES.join(', ')}` }), {
    error: 'grant_types must be an array of strings',
  })
  .min(1, 'at least one grant type is required')
  .max(GRANT_TYPES.length)
  .transform((grants) => GRANT_TYPES.filter((g) => grants.includes(g)));

const allowedResourcesField = z
  .array(z.string({ error: 'each resource must be a string' }).refine(isResourceIdentifier, sayIssue('resourceAbsolute')), {
    error: 'allowed_resources must be an array of strings',
  })
  .max(50, 'at most 50 allowed resources')
  .transform((ids) => [...new Set(ids)]);

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

/** Issue 34: a private_key_jwt client's public keys (RFC 7517), judged by client-keys.ts. */
const jwksField = z.unknown().superRefine((value, ctx) => {
  const verdict = checkJwks(value);
  if (!verdict.ok) ctx.addIssue({ code: 'custom', message: verdict.reason, params: { said: verdict.said } });
});
const jwksUriField = z.string({ error: 'jwks_uri must be a string' }).max(2048, 'jwks_uri is too long');

const clientFields = {
  name: nameField('name'),
  redirect_uri: redirectUriField.optional(),
  redirect_uris: redirectUrisField.optional(),
  scopes: scopesField.optional(),
  post_logout_redirect_uris: postLogoutRedirectUrisField.optional(),
  is_active: z.boolean({ error: 'is_active must be a boolean' }).optional(),
  grant_types: grantTypesField.optional(),
  allowed_resources: allowedResourcesField.optional(),
  jwks: jwksField.optional(),
  jwks_uri: jwksUriField.optional(),
  // RFC 9126 §6 (issue 34): the client must push its authorization requests.
  require_pushed_authorization_requests: z.boolean({ error: 'require_pushed_authorization_requests must be a boolean' }).optional(),
  // RFC 9449 §5.2 (issue 34): every access token of the client must be DPoP-bound.
  dpop_bound_access_tokens: z.boolean({ error: 'dpop_bound_access_tokens must be a boolean' }).optional(),
  // Browser origins answered CORS at the token, revocation, userinfo, device-authorization and PAR endpoints;
  // null (or never set): the default, the origins of a public client's redirect URIs.
  allowed_origins: webOrigins.nullable().optional(),
  // OpenID Connect Back-Channel Logout 1.0 (issue 34): where logout tokens are POSTed; null removes it. The address
  // rules (https, private targets) are judged by the service, which resolves the host.
  backchannel_logout_uri: z
    .string({ error: 'backchannel_logout_uri must be a string' })
    .max(2048, 'backchannel_logout_uri is too long')
    .nullable()
    .optional(),
  backchannel_logout_session_required: z.boolean({ error: 'backchannel_logout_session_required must be a boolean' }).optional(),
};

/** `redirect_uri` (one) and `redirect_uris` may both be given; the union is registered, in order. */
function mergeRedirectUris(b: { redirect_uri?: string; redirect_uris?: string[] }): string[] | undefined {
  if (b.redirect_uri === undefined && b.redirect_uris === undefined) return undefined;
  return [...new Set([...(b.redirect_uri !== undefined ? [b.redirect_uri] : []), ...(b.redirect_uris ?? [])])];
}

/** Scopes a client gets when created without `scopes`. */
export const DEFAULT_CLIENT_SCOPES = ['openid', 'profile', 'email'];

/** What a create body asks for once its preset (if any) fills in what the body leaves out (docs/apps.md). */
function withPreset(b: { preset?: ClientPreset; type?: ClientType; grant_types?: string[]; scopes?: string[] }) {
  const preset = b.preset ? PRESETS[b.preset] : undefined;
  return {
    type: b.type ?? preset?.type,
    grantTypes: b.grant_types ?? (preset ? [...preset.grantTypes] : [...DEFAULT_GRANT_TYPES]),
    scopes: b.scopes ?? (preset ? [...preset.scopes] : DEFAULT_CLIENT_SCOPES),
  };
}

export const createClientBody = z
  .object({
    ...clientFields,
    // What the application is (docs/apps.md): fills in type, grant_types and scopes where the body leaves them out.
    preset: z
      .enum(CLIENT_PRESETS, { error: `preset must be one of: ${CLIENT_PRESETS.join(', ')}` })
      .optional()
      .meta({
        description:
          'web (a web app with a server), spa (single-page app), native (native or command-line app), m2m (machine to ' +
          'machine), device (input-constrained device): fills in type, grant_types and scopes where the body leaves them out',
      }),
    type: z.enum(CLIENT_TYPES, { error: 'type must be confidential or public' }).optional(),
    token_endpoint_auth_method: z
      .enum(CLIENT_AUTH_METHODS, { error: `token_endpoint_auth_method must be one of: ${CLIENT_AUTH_METHODS.join(', ')}` })
      .optional(),
  })
  .refine((b) => !(b.preset && b.type && b.type !== PRESETS[b.preset].type), {
    ...sayIssue('presetTypeMismatch'),
    path: ['type'],
  })
  .refine((b) => !(b.token_endpoint_auth_method === 'none' && withPreset(b).type === 'confidential'), {
    ...sayIssue('authNoneConfidential'),
    path: ['token_endpoint_auth_method'],
  })
  .refine((b) => !(b.token_endpoint_auth_method && b.token_endpoint_auth_method !== 'none' && withPreset(b).type === 'public'), {
    ...sayIssue('authPublicNone'),
    path: ['token_endpoint_auth_method'],
  })
  .refine((b) => b.token_endpoint_auth_method === 'private_key_jwt' || (b.jwks === undefined && b.jwks_uri === undefined), {
    ...sayIssue('keysNotPrivateKeyJwt'),
    path: ['token_endpoint_auth_method'],
  })
  // Spec §4.6: a client is created with its redirect URI(s); only a client without the code grant may have none.
  .refine(
    (b) => b.redirect_uri !== undefined || b.redirect_uris !== undefined || !withPreset(b).grantTypes.includes('authorization_code'),
    { ...sayIssue('redirectUriOrUris'), path: ['redirect_uris'] },
  )
  .transform((b) => {
    const preset = withPreset(b);
    return {
      name: b.name,
      type: preset.type ?? (b.token_endpoint_auth_method === 'none' ? ('public' as const) : ('confidential' as const)),
      privateKeyJwt: b.token_endpoint_auth_method === 'private_key_jwt' ? { jwks: b.jwks, jwksUri: b.jwks_uri } : undefined,
      requirePushedAuthorizationRequests: b.require_pushed_authorization_requests,
      dpopBoundAccessTokens: b.dpop_bound_access_tokens,
      grantTypes: preset.grantTypes,
      allowedResources: b.allowed_resources ?? [],
      redirectUris: mergeRedirectUris(b) ?? [],
      scopes: preset.scopes,
      postLogoutRedirectUris: b.post_logout_redirect_uris ?? [],
      allowedOrigins: b.allowed_origins ?? null,
      isActive: b.is_active,
      backchannelLogoutUri: b.backchannel_logout_uri ?? null,
      backchannelLogoutSessionRequired: b.backchannel_logout_session_required,
    };
  });

export const updateClientBody = updateBody(clientFields).transform((b) => ({
  name: b.name,
  redirectUris: mergeRedirectUris(b),
  scopes: b.scopes,
  postLogoutRedirectUris: b.post_logout_redirect_uris,
  isActive: b.is_active,
  grantTypes: b.grant_types,
  allowedResources: b.allowed_resources,
  keys: b.jwks !== undefined || b.jwks_uri !== undefined ? { jwks: b.jwks, jwksUri: b.jwks_uri } : undefined,
  requirePushedAuthorizationRequests: b.require_pushed_authorization_requests,
  dpopBoundAccessTokens: b.dpop_bound_access_tokens,
  allowedOrigins: b.allowed_origins,
  backchannelLogoutUri: b.backchannel_logout_uri,
  backchannelLogoutSessionRequired: b.backchannel_logout_session_required,
}));

/** Back-channel logout deliveries of one client (issue 34). */
export const backchannelDeliveriesBody = z.strictObject({
  deliveries: z.array(
    z
      .strictObject({
        id: z.string(),
        user_id: z.string(),
        sid: z.string().meta({ description: "the logout token's sid: the browser session that ended" }),
        status: z.enum(['pending', 'delivered', 'failed']),
        attempts: z.number().int(),
        last_attempt_at: z.string().nullable(),
        last_response_status: z.number().int().nullable(),
        last_error: z.string().nullable(),
        next_attempt_at: z.string().nullable(),
        delivered_at: z.string().nullable(),
        created_at: z.string(),
      })
      .meta({ id: 'BackchannelLogoutDelivery' }),
  ),
});

/** OAuth client (CONTRACT §6): never the secret or its hash. */
export const clientBody = z
  .strictObject({
    client_id: z.string(),
    name: z.string(),
    redirect_uris: z.array(z.string().meta({ format: 'uri' })),
    scopes: z.array(z.string()),
    post_logout_redirect_uris: z.array(z.string().meta({ format: 'uri' })),
    is_active: z.boolean(),
    // CONTRACT §12, on every client.
    type: z.enum(CLIENT_TYPES).meta({ description: "confidential (the spec's clients: a secret) or public (no secret)" }),
    token_endpoint_auth_method: z.enum(['client_secret_basic', 'private_key_jwt', 'none']).meta({
      description: 'none for public clients; private_key_jwt for confidential clients that sign assertions with a key of jwks or jwks_uri',
    }),
    jwks: z
      .looseObject({ keys: z.array(z.looseObject({})) })
      .nullable()
      .meta({ description: 'private_key_jwt: the public keys (RFC 7517 JWK Set), or null' }),
    jwks_uri: z.string().nullable().meta({ description: 'private_key_jwt: where the client publishes its JWK Set, or null' }),
    dpop_bound_access_tokens: z
      .boolean()
      .meta({ description: 'RFC 9449: every token request of the client must carry a DPoP proof (default false)' }),
    require_pushed_authorization_requests: z
      .boolean()
      .meta({ description: 'RFC 9126: the client must push its authorization requests to /api/oauth/par (default false)' }),
    grant_types: z.array(z.string()).meta({ description: 'grants the client may use (default authorization_code, refresh_token)' }),
    allowed_resources: z.array(z.string()).meta({ description: 'RFC 8707 identifiers of the APIs the client may ask tokens for' }),
    allowed_origins: z.array(z.string()).meta({
      description:
        'browser origins answered CORS (no credentials) at the token, revocation, userinfo, device-authorization and PAR ' +
        "endpoints: the list set on the client, else the default (a public client: its redirect URIs' origins; a confidential one: none)",
    }),
    backchannel_logout_uri: z.string().nullable().meta({
      description: 'OpenID Connect Back-Channel Logout: where a logout token is POSTed when a session the client holds ends; null: none',
    }),
    backchannel_logout_session_required: z
      .boolean()
      .meta({ description: 'Back-Channel Logout §2.2: the client needs sid in logout tokens (sid is always sent)' }),
    allowed_origins_default: z.boolean().meta({ description: 'true while no list is set (PATCH allowed_origins: null goes back to it)' }),
    // CONTRACT §13.
    registration: z.enum(['admin', 'dynamic', 'metadata_document']).meta({
      description:
        'how the client came to exist: admin (this API or the console), dynamic (RFC 7591) or metadata_document (a Client ID ' +
        'Metadata Document: client_id is its https URL; written on first use, kept in step with the document)',
    }),
    ...timestampFields,
  })
  .meta({ id: 'OAuthClient' });

/** `?registration=dynamic` lists the clients that registered themselves (CONTRACT §13). */
export const listClientsQuery = z.object({
  registration: z
    .enum(['admin', 'dynamic', 'metadata_document'], { error: 'registration must be admin, dynamic or metadata_document' })
    .optional(),
});

export const clientEnvelope = z.strictObject({ client: clientBody });

export const clientsBody = z.strictObject({ clients: z.array(clientBody) });
export type OAuthClient = z.output<typeof clientBody>;
export type BackchannelDelivery = z.output<typeof backchannelDeliveriesBody>['deliveries'][number];

export const createdClientBody = z.strictObject({
  client: clientBody,
  client_secret: z.string().optional().meta({ description: 'Confidential clients only (a public client has none)' }),
});

/** API resources (CONTRACT §12, RFC 8707). */
export const apiResourceIdParams = z.object({ resourceId: z.uuid({ error: 'resourceId must be a uuid' }) });

/** RFC 6749 §3.3 scope-token: what an API resource defines and what an RFC 7591 `scope` lists. */
export const scopeTokenField = z
  .string({ error: 'each scope must be a string' })
  .regex(
    /^[\x21\x23-\x5B\x5D-\x7E]{1,100}$/,
    'each scope is 1-100 visible ASCII characters without spaces, quotes or backslashes (RFC 6749 §3.3)',
  );

const resourceScopeField = scopeTokenField.refine((s) => s !== 'openid', sayIssue('openidNotApiScope'));

const apiResourceFields = {
  identifier: z
    .string({ error: 'identifier is required' })
    .max(2048, 'identifier is too long')
    .refine(isResourceIdentifier, sayIssue('identifierAbsolute')),
  name: nameField('name'),
  scopes: z
    .array(resourceScopeField, { error: 'scopes must be an array of strings' })
    .max(100, 'at most 100 scopes')
    .transform((v) => [...new Set(v)]),
  access_token_ttl_s: z
    .number({ error: 'access_token_ttl_s must be a number' })
    .int('access_token_ttl_s must be an integer')
    .min(60, 'access_token_ttl_s is at least 60')
    .max(3600, 'access_token_ttl_s is at most 3600 (signing keys stay published an hour after rotation)'),
  open_registration: z.boolean({ error: 'open_registration must be a boolean' }),
  // RFC 9449 (issue 34): every access token for this API must be DPoP-bound.
  dpop_bound_access_tokens: z.boolean({ error: 'dpop_bound_access_tokens must be a boolean' }),
  role_based_access: z.boolean({ error: 'role_based_access must be a boolean' }),
};

export const createApiResourceBody = z
  .object({
    ...apiResourceFields,
    scopes: apiResourceFields.scopes.optional(),
    access_token_ttl_s: apiResourceFields.access_token_ttl_s.optional(),
    open_registration: apiResourceFields.open_registration.optional(),
    dpop_bound_access_tokens: apiResourceFields.dpop_bound_access_tokens.optional(),
    role_based_access: apiResourceFields.role_based_access.optional(),
  })
  .transform((b) => ({
    identifier: b.identifier,
    name: b.name,
    scopes: b.scopes ?? [],
    accessTokenTtlSeconds: b.access_token_ttl_s ?? 3600,
    openRegistration: b.open_registration ?? false,
    dpopBoundAccessTokens: b.dpop_bound_access_tokens ?? false,
    roleBasedAccess: b.role_based_access ?? false,
  }));

export const updateApiResourceBody = updateBody(apiResourceFields).transform((b) => ({
  identifier: b.identifier,
  name: b.name,
  scopes: b.scopes,
  accessTokenTtlSeconds: b.access_token_ttl_s,
  openRegistration: b.open_registration,
  dpopBoundAccessTokens: b.dpop_bound_access_tokens,
  roleBasedAccess: b.role_based_access,
}));

export const apiResourceBody = z
  .strictObject({
    id: z.uuid(),
    identifier: z.string(),
    name: z.string(),
    scopes: z.array(z.string()),
    access_token_ttl_s: z.number().int(),
    open_registration: z.boolean(),
    dpop_bound_access_tokens: z
      .boolean()
      .meta({ description: 'RFC 9449: tokens for this API are issued only to requests with a DPoP proof (default false)' }),
    role_based_access: z.boolean().meta({
      description: "true: a user-delegated token carries only the requested scopes the user's roles grant (api_scopes of roles)",
    }),
    ...timestampFields,
  })
  .meta({ id: 'ApiResource' });

export const apiResourceEnvelope = z.strictObject({ resource: apiResourceBody });
export const apiResourcesBody = z.strictObject({ resources: z.array(apiResourceBody) });
export type ApiResource = z.output<typeof apiResourceBody>;

export const clientSecretBody = z.strictObject({ client_id: z.string(), client_secret: z.string() });

export const summaryBody = z.strictObject({
  users: z.number().int(),
  active_users: z.number().int(),
  clients: z.number().int(),
  active_clients: z.number().int(),
  roles: z.number().int(),
  admins: z.number().int(),
});
export type Summary = z.output<typeof summaryBody>;

/** How many UTC days of sign-ins, today included (the console's overview shows 30). */
export const signInsQuery = z.object({
  days: z.coerce
    .number({ error: 'days must be a number' })
    .int('days must be an integer')
    .min(1, 'days must be at least 1')
    .max(90, 'days must be at most 90')
    .default(30),
});

/** Successful and failed sign-ins (auth.login.succeeded, auth.login.failed) per UTC day, oldest first, one per day. */
export const signInsPerDayBody = z.strictObject({
  days: z.array(
    z.strictObject({
      day: z.string().meta({ description: 'YYYY-MM-DD (UTC)' }),
      succeeded: z.number().int(),
      failed: z.number().int(),
    }),
  ),
});
export type SignInsPerDay = z.output<typeof signInsPerDayBody>;

/** A published OpenID Connect signing key (never its private half); `retired_at` null for the current one. */
export const signingKeyBody = z
  .strictObject({ kid: z.string(), alg: z.string(), created_at: timestampField, retired_at: timestampField.nullable() })
  .meta({ id: 'SigningKey' });
export const signingKeysBody = z.strictObject({ keys: z.array(signingKeyBody) });
export type SigningKey = z.output<typeof signingKeyBody>;
export const signingKeyRotatedBody = z.strictObject({ kid: z.string(), alg: z.string(), retired: z.array(z.string()) });

/** CONTRACT §13: POST /api/admin/registration-tokens. */
export const createRegistrationTokenBody = z
  .object({
    expires_in_s: z
      .number({ error: 'expires_in_s must be a number' })
      .int('expires_in_s must be an integer')
      .min(60, 'expires_in_s is at least 60')
      .max(90 * 24 * 3600, 'expires_in_s is at most 90 days')
      .optional(),
    max_uses: z
      .number({ error: 'max_uses must be a number' })
      .int('max_uses must be an integer')
      .min(1, 'max_uses is at least 1')
      .max(10_000, 'max_uses is at most 10000')
      .optional(),
  })
  .transform((b) => ({ expiresInSeconds: b.expires_in_s, maxUses: b.max_uses }));

export const registrationTokenIdParams = z.object({ tokenId: z.uuid({ error: 'tokenId must be a uuid' }) });

export const registrationTokenBody = z
  .strictObject({
    id: z.uuid(),
    created_by: z.uuid().nullable(),
    max_uses: z.number().int(),
    uses: z.number().int(),
    created_at: timestampField,
    expires_at: timestampField,
    revoked_at: timestampField.nullable(),
  })
  .meta({ id: 'RegistrationToken' });

export const createdRegistrationTokenBody = z.strictObject({
  token: z.string().meta({ description: 'The initial access token: shown once, stored only as its SHA-256' }),
  registration_token: registrationTokenBody,
});
export const registrationTokensBody = z.strictObject({ registration_tokens: z.array(registrationTokenBody) });
export const registrationTokenEnvelope = z.strictObject({ registration_token: registrationTokenBody });

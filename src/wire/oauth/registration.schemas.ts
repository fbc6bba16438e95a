import { z } from 'zod';
import { OAuthError } from '../../errors';
import { REGISTRATION_AUTH_METHODS } from '../../services/oauth/registration/registration-policy';
import { grantTypesField, redirectUrisField, scopeTokenField } from '../admin/admin.schemas';
import { httpsUrlField, nameField } from '../common.schemas';
import { webOrigins } from '../../declarations/settings';

/**
 * RFC 7591 §2 client metadata (CONTRACT §13). Each field is the admin API's rule for it (admin.schemas.ts: redirect
 * URIs of §8/§12, grant types, the one-line name) so a registered client is held to what an administrator would be;
 * what a registration mode narrows further is registration-policy.ts. Unknown members are ignored (RFC 7591 §2).
 */
const metadataFields = {
  redirect_uris: redirectUrisField.optional(),
  client_name: nameField('client_name').optional(),
  grant_types: grantTypesField.optional(),
  response_types: z
    .array(z.literal('code', { error: 'the only response type is code' }), { error: 'response_types must be an array of strings' })
    .max(1)
    .optional(),
  token_endpoint_auth_method: z
    .enum(REGISTRATION_AUTH_METHODS, { error: `token_endpoint_auth_method must be one of: ${REGISTRATION_AUTH_METHODS.join(', ')}` })
    .optional(),
  scope: z
    .string({ error: 'scope must be a string of space-separated values' })
    .max(2000, 'scope is too long')
    .transform((v) => [...new Set(v.split(' ').filter(Boolean))])
    .pipe(z.array(scopeTokenField).max(50, 'at most 50 scope values'))
    .optional(),
  client_uri: httpsUrlField('client_uri').optional(),
  logo_uri: httpsUrlField('logo_uri').optional(),
  // Issue 34: the keys of a private_key_jwt client (judged by client-keys.ts in the registration service).
  jwks: z.unknown().optional(),
  jwks_uri: z.string({ error: 'jwks_uri must be a string' }).max(2048, 'jwks_uri is too long').optional(),
  // RFC 9126 §6.
  require_pushed_authorization_requests: z.boolean({ error: 'require_pushed_authorization_requests must be a boolean' }).optional(),
  // RFC 9449 §5.2.
  dpop_bound_access_tokens: z.boolean({ error: 'dpop_bound_access_tokens must be a boolean' }).optional(),
  // An extension: the browser origins answered CORS (default: the origins of a public client's redirect URIs).
  allowed_origins: webOrigins.optional(),
  // OpenID Connect Back-Channel Logout 1.0 §2.2 (issue 34); the address rules are judged by the registration service.
  backchannel_logout_uri: z
    .string({ error: 'backchannel_logout_uri must be a string' })
    .max(2048, 'backchannel_logout_uri is too long')
    .optional(),
  backchannel_logout_session_required: z.boolean({ error: 'backchannel_logout_session_required must be a boolean' }).optional(),
};

function toMetadata(b: z.output<z.ZodObject<typeof metadataFields>>) {
  return {
    clientName: b.client_name,
    redirectUris: [...new Set(b.redirect_uris ?? [])],
    grantTypes: b.grant_types,
    tokenEndpointAuthMethod: b.token_endpoint_auth_method,
    scopes: b.scope,
    clientUri: b.client_uri,
    logoUri: b.logo_uri,
    jwks: b.jwks,
    jwksUri: b.jwks_uri,
    requirePushedAuthorizationRequests: b.require_pushed_authorization_requests,
    dpopBoundAccessTokens: b.dpop_bound_access_tokens,
    allowedOrigins: b.allowed_origins,
    backchannelLogoutUri: b.backchannel_logout_uri,
    backchannelLogoutSessionRequired: b.backchannel_logout_session_required,
  };
}

export const clientMetadataBody = z.object(metadataFields).transform(toMetadata);

/** RFC 7592 §2.2: the whole metadata again, with the client_id (and, if sent, the secret) of the client. */
export const clientMetadataUpdateBody = z
  .object({
    ...metadataFields,
    client_id: z.string({ error: 'client_id must be a string' }).max(200).optional(),
    client_secret: z.string({ error: 'client_secret must be a string' }).max(200).optional(),
  })
  .transform((b) => ({ ...toMetadata(b), clientId: b.client_id, clientSecret: b.client_secret }));

export const registrationClientParams = z.object({ clientId: z.string().min(1).max(200) });

/** RFC 7591 §3.2.1 / RFC 7592 §3. */
export const clientInformationBody = z
  .strictObject({
    client_id: z.string(),
    client_id_issued_at: z.number().int(),
    client_secret: z.string().optional().meta({ description: 'Confidential clients, in the registration response only' }),
    client_secret_expires_at: z.literal(0).optional().meta({ description: '0: the secret does not expire (confidential clients)' }),
    registration_access_token: z.string(),
    registration_client_uri: z.string(),
    client_name: z.string(),
    redirect_uris: z.array(z.string()),
    grant_types: z.array(z.string()),
    response_types: z.array(z.string()),
    token_endpoint_auth_method: z.enum(['none', 'client_secret_basic', 'private_key_jwt']),
    jwks: z
      .looseObject({ keys: z.array(z.looseObject({})) })
      .optional()
      .meta({ description: 'private_key_jwt clients' }),
    jwks_uri: z.string().optional().meta({ description: 'private_key_jwt clients' }),
    require_pushed_authorization_requests: z.boolean().optional().meta({ description: 'RFC 9126 §6: present (true) when required' }),
    backchannel_logout_uri: z
      .string()
      .optional()
      .meta({ description: 'OpenID Connect Back-Channel Logout: where logout tokens are POSTed' }),
    backchannel_logout_session_required: z.boolean().optional().meta({ description: 'Back-Channel Logout §2.2 (sid is always sent)' }),
    dpop_bound_access_tokens: z.boolean().optional().meta({ description: 'RFC 9449 §5.2: present (true) when required' }),
    scope: z.string(),
    client_uri: z.string().optional(),
    logo_uri: z.string().optional(),
    allowed_origins: z.array(z.string()).meta({
      description:
        "an extension: browser origins answered CORS at the token endpoint and its siblings (default: a public client's redirect URI origins)",
    }),
  })
  .meta({ id: 'ClientInformation' });

/**
 * RFC 7591 §3.2.2: a refused field is `invalid_redirect_uri` when it is a redirect URI, else `invalid_client_metadata`,
 * with the first problem as the description; a malformed client id in the path is an unknown client (401).
 */
export function registrationInvalid(issues: z.core.$ZodIssue[], where: 'params' | 'query' | 'body'): OAuthError {
  if (where === 'params') {
    return new OAuthError('invalid_token', 'The registration access token is invalid, expired or used up', {
      headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
    });
  }
  const issue = issues[0];
  const path = issue.path.map(String).join('.');
  const code = issue.path[0] === 'redirect_uris' ? 'invalid_redirect_uri' : 'invalid_client_metadata';
  return new OAuthError(code, path ? `${path}: ${issue.message}` : issue.message);
}

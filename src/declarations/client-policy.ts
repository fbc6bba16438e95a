/**
 * The rules of client types and grant types (CONTRACT §12) as pure functions: the admin API, registration and the
 * token, revocation and device endpoints ask here and enforce the verdict. test/unit/client-policy.test.ts checks
 * them as tables.
 */
import { say, type ValidationKey, type ValidationParams } from '../i18n';
import { isPrivateUseRedirectUri } from '../lib/redirect-uri';

/**
 * The scopes a client may hold and request: the spec's six (spec §2.10, §5.9) and `offline_access` (OIDC Core §11,
 * CONTRACT §11), which refresh tokens do not depend on (every code grant gets one, as the spec says) but which OpenID
 * relying parties such as oidc-agent ask for.
 */
export const SUPPORTED_SCOPES = ['openid', 'profile', 'email', 'read', 'write', 'admin', 'offline_access'] as const;

export const CLIENT_TYPES = ['confidential', 'public'] as const;
export type ClientType = (typeof CLIENT_TYPES)[number];

/** RFC 8628 §3.4. */
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** RFC 8693 §2.1 (docs/token-exchange.md). */
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';

export const GRANT_TYPES = ['authorization_code', 'refresh_token', 'client_credentials', DEVICE_CODE_GRANT, TOKEN_EXCHANGE_GRANT] as const;
export type GrantType = (typeof GRANT_TYPES)[number];

/** The spec's clients: what every client created without `grant_types` (and every client before issue 20) has. */
export const DEFAULT_GRANT_TYPES: readonly GrantType[] = ['authorization_code', 'refresh_token'];

/**
 * A refusal names the registration field it is about; `reason` is its English sentence (the API's message, RFC 7591's
 * error_description) and `said` the catalogue key the console shows in the page's language.
 */
export type PolicyVerdict =
  | { allowed: true }
  | {
      allowed: false;
      field: 'grant_types' | 'redirect_uris';
      reason: string;
      said: { key: ValidationKey; params?: ValidationParams };
    };
const ALLOWED: PolicyVerdict = { allowed: true };
const refuse = (key: ValidationKey, field: 'grant_types' | 'redirect_uris' = 'grant_types', params?: ValidationParams): PolicyVerdict => {
  const { message, said } = say(key, params);
  return { allowed: false, field, reason: message, said };
};

/** What a registration must satisfy, whatever created it (admin API, console, dynamic registration). */
export interface ClientShape {
  type: ClientType;
  grantTypes: readonly string[];
  redirectUris: readonly string[];
}

/**
 * - client_credentials acts without a user on the client's own authority: confidential clients only (RFC 6749 §4.4);
 * - token exchange (RFC 8693) turns a token someone presented into another: confidential clients only (docs/token-exchange.md);
 * - authorization_code needs a redirect URI to send the code to;
 * - refresh_token only comes with a grant that issues refresh tokens;
 * - private-use scheme redirect URIs (RFC 8252 §7.1) belong to native apps: public clients only.
 */
export function checkClientShape(client: ClientShape): PolicyVerdict {
  const grants = client.grantTypes;
  if (grants.length === 0) return refuse('grantTypesRequired');
  const unknown = grants.find((g) => !GRANT_TYPES.some((known) => known === g));
  if (unknown !== undefined) return refuse('grantTypeUnknown', 'grant_types', { grant: unknown });
  if (client.type === 'public' && grants.includes('client_credentials')) return refuse('clientCredentialsPublic');
  if (client.type === 'public' && grants.includes(TOKEN_EXCHANGE_GRANT)) return refuse('tokenExchangePublic');
  if (grants.includes('authorization_code') && client.redirectUris.length === 0) return refuse('redirectUriRequired', 'redirect_uris');
  if (grants.includes('refresh_token') && !grants.includes('authorization_code') && !grants.includes(DEVICE_CODE_GRANT)) {
    return refuse('refreshTokenAlone');
  }
  if (client.type !== 'public' && client.redirectUris.some(isPrivateUseRedirectUri)) {
    return refuse('privateUseConfidential', 'redirect_uris');
  }
  return ALLOWED;
}

/**
 * Discovery's token_endpoint_auth_methods_supported: the spec's two, `none` for public clients, and private_key_jwt
 * (issue 34) for confidential clients that registered keys.
 */
export const TOKEN_ENDPOINT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'] as const;

/** RFC 6749 §5.2 unauthorized_client: a grant the client is not registered for. */
export function grantAllowed(client: { grantTypes: readonly string[] }, grantType: string): boolean {
  return client.grantTypes.includes(grantType);
}

/** Which endpoints a client may call with its authentication. Public clients may not introspect (CONTRACT §12). */
export type ClientEndpoint = 'token' | 'revoke' | 'device' | 'introspect' | 'par';

/**
 * How a presented client authentication is judged against the client's type: a confidential client needs its secret,
 * a public client must not send one (it has none: sending one means it believes it is another kind of client).
 */
export function clientAuthentication(
  type: ClientType,
  presented: { secret: boolean },
  endpoint: ClientEndpoint,
): { verdict: 'check_secret' | 'id_only' } | { verdict: 'refuse'; reason: string } {
  if (type === 'confidential') {
    return presented.secret ? { verdict: 'check_secret' } : { verdict: 'refuse', reason: 'Client authentication required' };
  }
  if (presented.secret)
    return { verdict: 'refuse', reason: 'This is a public client: it authenticates with client_id alone, without a secret' };
  if (endpoint === 'introspect') return { verdict: 'refuse', reason: 'Public clients may not call introspection' };
  return { verdict: 'id_only' };
}

/**
 * CONTRACT §12/§13: whether a client may ask tokens for an API. Listed in its `allowed_resources`, or, for a client
 * that registered itself (RFC 7591), marked `open_registration` by an administrator: judged at each request, so
 * clearing the mark takes the API away from every self-registered client at once.
 */
export function resourceAllowed(
  client: { allowedResources: readonly string[]; registration: 'admin' | 'dynamic' | 'metadata_document' },
  resource: { identifier: string; openRegistration: boolean },
): boolean {
  return client.allowedResources.includes(resource.identifier) || (client.registration === 'dynamic' && resource.openRegistration);
}

export { corsOriginsOf, originsOfRedirectUris } from '../lib/redirect-uri';

import { GRANT_TYPES, TOKEN_ENDPOINT_AUTH_METHODS } from '../../declarations/client-policy';
import type { Config } from '../../config';
import type { SettingValues } from '../../declarations/settings';
import { SUPPORTED_SCOPES } from '../oauth/client-secrets';
import { clientCapabilityMetadata, registrationEndpoint } from '../oauth/discovery.service';
import { PROMPT_VALUES } from './authorize-params';

/** Every claim an id_token or userinfo response may carry (CONTRACT §9). */
export const OIDC_CLAIMS = [
  'iss',
  'sub',
  'aud',
  'exp',
  'iat',
  'auth_time',
  'nonce',
  'sid',
  'at_hash',
  'amr',
  'name',
  'given_name',
  'family_name',
  'updated_at',
  'email',
  'email_verified',
] as const;

/**
 * OpenID Connect Discovery 1.0 (CONTRACT §9), served at /.well-known/openid-configuration and under
 * /api/oauth/.well-known/. Its issuer is OIDC_ISSUER (default BASE_URL), like the spec's RFC 8414 document (CONTRACT §11).
 */
export function buildOpenIdConfiguration(
  config: Pick<Config, 'baseUrl' | 'oidcIssuer'>,
  settings: Pick<SettingValues, 'client_registration' | 'client_id_metadata_documents' | 'require_pushed_authorization_requests'>,
) {
  const api = `${config.baseUrl}/api/oauth`;
  return {
    issuer: config.oidcIssuer,
    authorization_endpoint: `${api}/authorize`,
    token_endpoint: `${api}/token`,
    userinfo_endpoint: `${api}/userinfo`,
    jwks_uri: `${api}/jwks`,
    end_session_endpoint: `${api}/logout`,
    // OpenID Connect Back-Channel Logout 1.0 §2.1 (issue 34): logout tokens always carry sid.
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
    revocation_endpoint: `${api}/revoke`,
    introspection_endpoint: `${api}/introspect`,
    response_types_supported: ['code'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['RS256', 'ES256'],
    scopes_supported: [...SUPPORTED_SCOPES],
    claims_supported: [...OIDC_CLAIMS],
    // The spec-era lists stay as the suite pins them; CONTRACT §12's grants and `none` are announced in the members
    // below (docs/oauth.md, "Discovery").
    // CONTRACT §12: every grant and client authentication method a client may be registered for.
    grant_types_supported: [...GRANT_TYPES],
    token_endpoint_auth_methods_supported: [...TOKEN_ENDPOINT_AUTH_METHODS],
    device_authorization_endpoint: `${api}/device_authorization`,
    ...registrationEndpoint(config, settings),
    code_challenge_methods_supported: ['S256'],
    prompt_values_supported: [...PROMPT_VALUES],
    // RFC 9207: authorization responses carry `iss` (authorize.service.ts).
    authorization_response_iss_parameter_supported: true,
    // CONTRACT §12/§13: announced only when on (an MCP client then sends its document URL as client_id).
    ...(settings.client_id_metadata_documents ? { client_id_metadata_document_supported: true } : {}),
    ...clientCapabilityMetadata(config, settings),
  };
}

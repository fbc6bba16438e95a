import type { Config } from '../../config';
import type { SettingValues } from '../../declarations/settings';
import { CLIENT_ASSERTION_ALGS } from './client-keys';
import { DPOP_ALGS } from './dpop';
import { GRANT_TYPES, TOKEN_ENDPOINT_AUTH_METHODS } from '../../declarations/client-policy';
import { SUPPORTED_SCOPES } from './client-secrets';

/**
 * The discovery document of spec §2.10 (RFC 8414); endpoints are absolute URLs on BASE_URL.
 *
 * `issuer` is OIDC_ISSUER (default BASE_URL), not the spec's literal `service-sso` (CONTRACT §11): RFC 8414 §3.3 makes
 * a client check that the advertised issuer is the URL it asked, and OIDC Core §3.1.3.7 that it equals the id_token's
 * `iss`; with `service-sso` here every strict client library refused the id_token of the spec's own example scope.
 * The HS256 access and refresh tokens keep `iss: service-sso` (ISSUER).
 *
 * Beyond spec §2.10's constants it lists what a client needs for the id_token a request with `openid` gets (RFC 8414
 * §2 admits OpenID metadata): jwks_uri, the signing algorithms (a library otherwise expects RS256 only),
 * end_session_endpoint, and introspection_endpoint.
 */
export function buildDiscoveryDocument(
  config: Pick<Config, 'baseUrl' | 'oidcIssuer'>,
  settings: Pick<SettingValues, 'client_registration' | 'client_id_metadata_documents' | 'require_pushed_authorization_requests'>,
) {
  return {
    issuer: config.oidcIssuer,
    authorization_endpoint: `${config.baseUrl}/api/oauth/authorize`,
    token_endpoint: `${config.baseUrl}/api/oauth/token`,
    userinfo_endpoint: `${config.baseUrl}/api/oauth/userinfo`,
    revocation_endpoint: `${config.baseUrl}/api/oauth/revoke`,
    jwks_uri: `${config.baseUrl}/api/oauth/jwks`,
    introspection_endpoint: `${config.baseUrl}/api/oauth/introspect`,
    end_session_endpoint: `${config.baseUrl}/api/oauth/logout`,
    device_authorization_endpoint: `${config.baseUrl}/api/oauth/device_authorization`,
    ...registrationEndpoint(config, settings),
    response_types_supported: ['code'],
    // CONTRACT §12: every grant and client authentication method a client may be registered for.
    grant_types_supported: [...GRANT_TYPES],
    token_endpoint_auth_methods_supported: [...TOKEN_ENDPOINT_AUTH_METHODS],
    code_challenge_methods_supported: ['S256'],
    scopes_supported: [...SUPPORTED_SCOPES],
    claims_supported: ['sub', 'name', 'email', 'email_verified', 'updated_at'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['RS256', 'ES256'],
    authorization_response_iss_parameter_supported: true,
    // CONTRACT §12/§13: announced only when on (an MCP client then sends its document URL as client_id).
    ...(settings.client_id_metadata_documents ? { client_id_metadata_document_supported: true } : {}),
    ...clientCapabilityMetadata(config, settings),
  };
}

/**
 * Issue 34, in both discovery documents: the PAR endpoint, and how clients may authenticate at each endpoint that
 * authenticates them, with the assertion algorithms of private_key_jwt.
 */
export function clientCapabilityMetadata(
  config: Pick<Config, 'baseUrl'>,
  settings: Pick<SettingValues, 'require_pushed_authorization_requests'>,
) {
  const algs = [...CLIENT_ASSERTION_ALGS];
  return {
    // RFC 9126 §5: PAR, and whether every client must use it (the setting; a client may be required on its own).
    pushed_authorization_request_endpoint: `${config.baseUrl}/api/oauth/par`,
    require_pushed_authorization_requests: settings.require_pushed_authorization_requests,
    token_endpoint_auth_signing_alg_values_supported: algs,
    revocation_endpoint_auth_methods_supported: [...TOKEN_ENDPOINT_AUTH_METHODS],
    revocation_endpoint_auth_signing_alg_values_supported: algs,
    // Public clients may not introspect (CONTRACT §12).
    introspection_endpoint_auth_methods_supported: TOKEN_ENDPOINT_AUTH_METHODS.filter((m) => m !== 'none'),
    introspection_endpoint_auth_signing_alg_values_supported: algs,
    // RFC 9449 §5.1: the algorithms of DPoP proofs (docs/dpop.md).
    dpop_signing_alg_values_supported: [...DPOP_ALGS],
  };
}

/** RFC 8414 §2 / OIDC Discovery §3 `registration_endpoint`: listed only when CLIENT_REGISTRATION is on (CONTRACT §12, §13). */
export function registrationEndpoint(
  config: Pick<Config, 'baseUrl'>,
  settings: Pick<SettingValues, 'client_registration'>,
): { registration_endpoint?: string } {
  return settings.client_registration === 'off' ? {} : { registration_endpoint: `${config.baseUrl}/api/oauth/register` };
}

import type { Config } from '../../config';
import { SUPPORTED_SCOPES } from './client-secrets';

/** The discovery document of spec §2.10; endpoints are absolute URLs on BASE_URL. */
export function buildDiscoveryDocument(config: Pick<Config, 'baseUrl' | 'issuer'>) {
  return {
    issuer: config.issuer,
    authorization_endpoint: `${config.baseUrl}/api/oauth/authorize`,
    token_endpoint: `${config.baseUrl}/api/oauth/token`,
    userinfo_endpoint: `${config.baseUrl}/api/oauth/userinfo`,
    revocation_endpoint: `${config.baseUrl}/api/oauth/revoke`,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    code_challenge_methods_supported: ['S256'],
    scopes_supported: [...SUPPORTED_SCOPES],
    claims_supported: ['sub', 'name', 'email', 'email_verified', 'updated_at'],
  };
}

/**
 * The defaults of upstream identity providers (CONTRACT §16), declared once: the service applies them, the console's
 * form starts from them.
 */
export const GITHUB_DEFAULTS = {
  baseUrl: 'https://github.com',
  apiBaseUrl: 'https://api.github.com',
  scopes: 'read:user user:email',
} as const;
export const OIDC_DEFAULT_SCOPES = 'openid profile email';

export const PROVIDER_PRESETS = {
  google: { type: 'oidc', name: 'Google', issuer: 'https://accounts.google.com', scopes: OIDC_DEFAULT_SCOPES },
  gitlab: { type: 'oidc', name: 'GitLab', issuer: 'https://gitlab.com', scopes: 'openid profile email' },
  // Microsoft's issuer names the tenant: https://login.microsoftonline.com/{tenant id}/v2.0 (docs/federation.md).
  microsoft: { type: 'oidc', name: 'Microsoft', issuer: undefined, scopes: OIDC_DEFAULT_SCOPES },
  github: { type: 'github', name: 'GitHub', issuer: undefined, scopes: GITHUB_DEFAULTS.scopes },
} as const satisfies Record<string, { type: 'oidc' | 'github'; name: string; issuer: string | undefined; scopes: string }>;

/** Where a provider sends the browser back (registered at the provider). */
export function callbackUrlOf(config: { baseUrl: string }, slug: string): string {
  return `${config.baseUrl}/api/auth/idp/${encodeURIComponent(slug)}/callback`;
}

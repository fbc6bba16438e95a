import { SUPPORTED_SCOPES } from './client-secrets';
import { isOneOf } from '../../lib/one-of';

/** RFC 6749 §3.3: scope is a list of space-delimited, case-sensitive strings. Returned deduplicated, in catalogue order. */
export function parseScope(scope: string): string[] {
  const requested = new Set(scope.split(' ').filter(Boolean));
  const known = SUPPORTED_SCOPES.filter((s) => requested.has(s));
  const unknown = [...requested].filter((s) => !isOneOf(SUPPORTED_SCOPES, s));
  return [...known, ...unknown];
}

export function formatScope(scopes: readonly string[]): string {
  return scopes.join(' ');
}

export function isSubset(scopes: readonly string[], of: readonly string[]): boolean {
  return scopes.every((s) => of.includes(s));
}

export function unionScopes(a: readonly string[], b: readonly string[]): string[] {
  return parseScope(formatScope([...a, ...b]));
}

export type RequestedScopeVerdict =
  { ok: true; scopes: string[] } | { ok: false; error: 'invalid_request' | 'invalid_scope'; description: string };

/**
 * The scope an authorization request is granted, or why it is refused.
 * - OpenID requests (scope contains `openid`) ignore values this server does not understand (OIDC Core §3.1.2.1:
 *   "Scope values used that are not understood by an implementation SHOULD be ignored"), so an RP configured for
 *   another provider's extra scopes still signs in. A value this server knows but the client may not hold is still
 *   `invalid_scope`: ignoring it would hand the client less than it believes it was granted without saying so.
 * - Plain OAuth 2.0 requests refuse any value outside the client's scopes (RFC 6749 §4.1.2.1 `invalid_scope`).
 */
export function resolveRequestedScopes(
  scope: string,
  clientScopes: readonly string[],
  resourceScopes: readonly string[] = [],
): RequestedScopeVerdict {
  const asked = parseScope(scope);
  // The scopes of the API named with `resource` (RFC 8707, CONTRACT §12) are known too.
  const known = (s: string) => isOneOf(SUPPORTED_SCOPES, s) || resourceScopes.includes(s);
  const scopes = asked.includes('openid') ? asked.filter(known) : asked;
  if (scopes.length === 0) return { ok: false, error: 'invalid_request', description: 'scope is required' };
  if (!isSubset(scopes, clientScopes)) {
    return { ok: false, error: 'invalid_scope', description: 'scope contains a value this client may not request' };
  }
  return { ok: true, scopes };
}

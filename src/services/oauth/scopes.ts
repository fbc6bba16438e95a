import { SUPPORTED_SCOPES } from './client-secrets';

/** RFC 6749 §3.3: scope is a list of space-delimited, case-sensitive strings. Returned deduplicated, in catalogue order. */
export function parseScope(scope: string): string[] {
  const requested = new Set(scope.split(' ').filter(Boolean));
  const known = SUPPORTED_SCOPES.filter((s) => requested.has(s));
  const unknown = [...requested].filter((s) => !(SUPPORTED_SCOPES as readonly string[]).includes(s));
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

/** Plain words for the consent screen. */
export const SCOPE_DESCRIPTIONS: Readonly<Record<string, string>> = {
  openid: 'Confirm your identity',
  profile: 'See your name',
  email: 'See your email address',
  read: 'Read your data',
  write: 'Create and change your data',
  admin: 'Perform administrative actions on your behalf',
};

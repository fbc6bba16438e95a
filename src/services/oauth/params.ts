import { OAuthError } from '../../errors';

/** A required OAuth parameter: missing or empty is RFC 6749 invalid_request. */
export function requireParam(value: string | undefined, name: string): string {
  if (!value) throw new OAuthError('invalid_request', `${name} is required`);
  return value;
}

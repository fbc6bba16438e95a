import type { SamlNameIdFormat } from '../../db/repositories/saml-apps.repo';

export { DEFAULT_SAML_ATTRIBUTES } from '../../declarations/saml';

export const NAME_ID_FORMATS = ['emailAddress', 'persistent', 'transient', 'unspecified'] as const satisfies readonly SamlNameIdFormat[];

export const NAME_ID_FORMAT_URN: Record<SamlNameIdFormat, string> = {
  emailAddress: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
  persistent: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
  transient: 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient',
  unspecified: 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
};

/** CONTRACT §19: RelayState is returned unchanged, at most 80 bytes (SAML Bindings §3.4.3). */
export const MAX_RELAY_STATE_BYTES = 80;
/** The validity window of an assertion (NotBefore / NotOnOrAfter) and of an AuthnRequest's IssueInstant. */
export const SAML_WINDOW_SECONDS = 300;
/** How long a person may take to sign in before the SP's request is forgotten. */
export const SAML_REQUEST_TTL_SECONDS = 600;

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Where this IdP may send a browser with a SAML message (ACS and SLO URLs), one rule for the REST fields and the
 * SP metadata: an absolute https URL (http only on a loopback host, for an SP on the same machine), without user
 * information, fragment, whitespace or control characters, at most 2048 characters. Undefined when acceptable,
 * otherwise the reason.
 */
export function samlEndpointProblem(value: string): string | undefined {
  if (value.length > 2048) return 'is too long';
  if (/[\s\x00-\x1f\x7f\\]/.test(value)) return 'must not contain whitespace, control characters or backslashes';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.username || url.password) return 'must not carry user information';
  if (url.hash) return 'must not have a fragment';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return undefined;
  return 'must be an https URL (http only on localhost)';
}

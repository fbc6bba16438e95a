/**
 * The rules of dynamic client registration (RFC 7591, CONTRACT §13) as pure functions: what a mode lets a client
 * register. The registration service asks here and enforces the verdict; test/unit/registration-policy.test.ts checks
 * them as tables. The rules every client obeys, however it was created, stay in client-policy.ts (checkClientShape)
 * and lib/redirect-uri.ts (checkRedirectUri): this file only narrows them.
 */
import { checkRedirectUri } from '../../../lib/redirect-uri';
import { SUPPORTED_SCOPES } from '../client-secrets';
import { checkClientShape, TOKEN_EXCHANGE_GRANT, type ClientType } from '../../../declarations/client-policy';
import { OPEN_REGISTRATION_SCOPES } from './metadata-document-policy';

export type RegistrationMode = 'off' | 'token' | 'open';

/** CONTRACT §13: the scopes of an `open` registration (besides those of APIs marked open_registration), as of a CIMD client. */
export { OPEN_REGISTRATION_SCOPES };

/**
 * The grants of an `open` registration: a user signs in through the browser. client_credentials needs a secret, and
 * the device grant is left out because a self-registered device client is the tool of device-code phishing.
 */
export const OPEN_REGISTRATION_GRANTS: readonly string[] = ['authorization_code', 'refresh_token'];

/** RFC 7591 §2 token_endpoint_auth_method values this server registers (private_key_jwt with jwks or jwks_uri: issue 34). */
export const REGISTRATION_AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'] as const;
export type RegistrationAuthMethod = (typeof REGISTRATION_AUTH_METHODS)[number];

/** What a registration asks for, after the edge schema (field syntax, the admin API's field rules). */
export interface RequestedRegistration {
  type: ClientType;
  grantTypes: readonly string[];
  redirectUris: readonly string[];
  /** The requested `scope` values, split. */
  scopes: readonly string[];
}

export type RegistrationVerdict =
  { allowed: true; ownScopes: string[] } | { allowed: false; error: 'invalid_redirect_uri' | 'invalid_client_metadata'; reason: string };

const refuse = (error: 'invalid_redirect_uri' | 'invalid_client_metadata', reason: string): RegistrationVerdict => ({
  allowed: false,
  error,
  reason,
});

/** RFC 7591 §2: omitted, the client authenticates with client_secret_basic; `open` registers public clients only. */
export function clientTypeFor(mode: RegistrationMode, method: RegistrationAuthMethod | undefined): ClientType {
  if (method === undefined) return mode === 'open' ? 'public' : 'confidential';
  return method === 'none' ? 'public' : 'confidential';
}

/**
 * Judges a registration in a mode. `resourceScopes` are the scopes of the APIs marked open_registration (a client may
 * name them; they are granted with the API, not stored as the client's own). `allowHttp` is ALLOW_HTTP_REDIRECT_URIS,
 * which an `open` registration never gets. Returns the client's own scopes (those of this server's catalogue).
 */
export function checkRegistration(
  mode: 'token' | 'open',
  requested: RequestedRegistration,
  options: { resourceScopes: readonly string[]; allowHttp: boolean },
): RegistrationVerdict {
  const open = mode === 'open';
  if (open && requested.type !== 'public') {
    return refuse('invalid_client_metadata', 'open registration is for public clients only (token_endpoint_auth_method none)');
  }
  if (open) {
    const grant = requested.grantTypes.find((g) => !OPEN_REGISTRATION_GRANTS.includes(g));
    if (grant !== undefined) return refuse('invalid_client_metadata', `grant type ${grant} is not available to open registration`);
  }
  // docs/token-exchange.md: an administrator decides which clients may turn other clients' tokens into their own.
  if (requested.grantTypes.includes(TOKEN_EXCHANGE_GRANT)) {
    return refuse('invalid_client_metadata', 'token exchange is granted by an administrator, not by dynamic registration');
  }
  for (const uri of requested.redirectUris) {
    // §8/§12 rules; `open` adds: loopback or https only (no ALLOW_HTTP_REDIRECT_URIS, no private-use schemes).
    const check = checkRedirectUri(uri, { allowHttp: !open && options.allowHttp, allowPrivateUse: !open });
    if (!check.ok) return refuse('invalid_redirect_uri', `${uri}: ${check.reason}`);
  }
  const shape = checkClientShape(requested);
  if (!shape.allowed) return refuse(shape.field === 'redirect_uris' ? 'invalid_redirect_uri' : 'invalid_client_metadata', shape.reason);

  const ownCatalogue: readonly string[] = open ? OPEN_REGISTRATION_SCOPES : SUPPORTED_SCOPES;
  const refused = requested.scopes.find((s) => !ownCatalogue.includes(s) && !options.resourceScopes.includes(s));
  if (refused !== undefined) {
    return refuse('invalid_client_metadata', `scope ${refused} is not available to ${open ? 'open' : 'dynamic'} registration`);
  }
  return { allowed: true, ownScopes: SUPPORTED_SCOPES.filter((s) => requested.scopes.includes(s)) };
}

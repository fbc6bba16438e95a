import type { ClientRegistration } from '../../db/repositories/oauth-clients.repo';
import { redirectUriMatches } from '../../lib/redirect-uri';
import { isSubset, unionScopes } from './scopes';

/** What a person consented to for one client (an `oauth_grants` row). */
export interface ConsentedGrant {
  scopes: readonly string[];
  /** RFC 8707 identifiers of the API resources (CONTRACT §12). */
  resources: readonly string[];
  redirectUris: readonly string[];
}

/** What a request would have the grant cover: scopes, at most one API, and (at authorize) the redirect URI. */
export interface ConsentAsk {
  scopes: readonly string[];
  resource?: string | null;
  redirectUri?: string;
}

/** Why a request needs the person's consent again (CONTRACT §23); each is said in `consent_required`'s description. */
export type ConsentShortfall = 'no_grant' | 'scope' | 'resource' | 'redirect_uri';

/**
 * A client that registered itself (RFC 7591 or a Client ID Metadata Document, CONTRACT §13) chose its own redirect
 * URIs, and may add more later: consent is bound to the one the person was sent back to. An administrator's client
 * had its redirect URIs reviewed, so its grant serves all of them.
 */
export function bindsRedirectUri(client: { registration: ClientRegistration }): boolean {
  return client.registration !== 'admin';
}

/**
 * CONTRACT §23 "Grants are bound to what was consented", as one pure rule used by authorize (silent
 * re-authorization), the code exchange and the refresh: undefined when the grant covers the request, otherwise what it
 * lacks. A resource must be one the person approved; a loopback redirect URI on another port is the same URI
 * (RFC 8252 §7.3, as at registration).
 */
export function consentShortfall(
  grant: ConsentedGrant | undefined,
  client: { registration: ClientRegistration },
  ask: ConsentAsk,
): ConsentShortfall | undefined {
  if (!grant) return 'no_grant';
  if (!isSubset(ask.scopes, grant.scopes)) return 'scope';
  if (ask.resource && !grant.resources.includes(ask.resource)) return 'resource';
  if (ask.redirectUri !== undefined && bindsRedirectUri(client) && !redirectUriMatches(grant.redirectUris, ask.redirectUri)) {
    return 'redirect_uri';
  }
  return undefined;
}

/** The grant once the person approved `ask` (on /consent or /device): the union with what was there. */
export function widenedGrant(existing: ConsentedGrant | undefined, ask: ConsentAsk): ConsentedGrant {
  const resources = [...(existing?.resources ?? [])];
  if (ask.resource && !resources.includes(ask.resource)) resources.push(ask.resource);
  const redirectUris = [...(existing?.redirectUris ?? [])];
  if (ask.redirectUri !== undefined && !redirectUriMatches(redirectUris, ask.redirectUri)) redirectUris.push(ask.redirectUri);
  return { scopes: existing ? unionScopes(existing.scopes, ask.scopes) : [...ask.scopes], resources, redirectUris };
}

/** The sentence `consent_required` carries, and the one the token endpoint's invalid_target carries for a resource. */
export const SHORTFALL_DESCRIPTIONS: Readonly<Record<ConsentShortfall, string>> = {
  no_grant: 'The user has not approved this client',
  scope: 'The user has not granted this client every requested scope',
  resource: 'The user has not approved this client for this resource',
  redirect_uri: 'The user has not approved this client for this redirect_uri',
};

/**
 * The rules of RFC 8693 token exchange (docs/token-exchange.md) as pure functions: facts in, a tagged decision out.
 * token-exchange.service.ts gathers the facts (verifies the tokens, reads the API) and enforces the verdicts;
 * test/unit/token-exchange-policy.test.ts checks them as tables.
 */
import type { ActClaim } from './resource-tokens.service';
import { isSubset } from './scopes';

/** RFC 8693 §3: the token type identifiers this server takes and issues. */
export const TOKEN_TYPE_ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';
export const TOKEN_TYPE_ID_TOKEN = 'urn:ietf:params:oauth:token-type:id_token';

export type ExchangeRefusal = {
  ok: false;
  error: 'invalid_request' | 'invalid_grant' | 'invalid_scope' | 'invalid_target' | 'invalid_dpop_proof';
  description: string;
};
const refuse = (error: ExchangeRefusal['error'], description: string): ExchangeRefusal => ({ ok: false, error, description });

/** The parameters of an exchange request as sent (RFC 8693 §2.1). */
export interface ExchangeParams {
  subjectToken?: string;
  subjectTokenType?: string;
  actorToken?: string;
  actorTokenType?: string;
  requestedTokenType?: string;
}

/**
 * RFC 8693 §2.1: subject_token and its type are required; an actor_token comes with its type and a type never comes
 * without its token. Subject tokens are access tokens (the spec's and RFC 9068 ones) or id_tokens; refresh tokens,
 * SAML assertions and foreign JWTs are not taken. The actor is an access token. Only an access token is issued.
 */
export function checkExchangeParams(
  p: ExchangeParams,
): { ok: true; subjectKind: 'access_token' | 'id_token'; subjectToken: string; actorToken: string | undefined } | ExchangeRefusal {
  if (!p.subjectToken) return refuse('invalid_request', 'subject_token is required');
  if (!p.subjectTokenType) return refuse('invalid_request', 'subject_token_type is required');
  if (p.subjectTokenType !== TOKEN_TYPE_ACCESS_TOKEN && p.subjectTokenType !== TOKEN_TYPE_ID_TOKEN) {
    return refuse('invalid_request', `subject_token_type must be ${TOKEN_TYPE_ACCESS_TOKEN} or ${TOKEN_TYPE_ID_TOKEN}`);
  }
  if (p.actorToken !== undefined && !p.actorTokenType) return refuse('invalid_request', 'actor_token_type is required with actor_token');
  if (p.actorToken === undefined && p.actorTokenType !== undefined) {
    return refuse('invalid_request', 'actor_token_type must not be sent without actor_token');
  }
  if (p.actorTokenType !== undefined && p.actorTokenType !== TOKEN_TYPE_ACCESS_TOKEN) {
    return refuse('invalid_request', `actor_token_type must be ${TOKEN_TYPE_ACCESS_TOKEN}`);
  }
  if (p.actorToken === '') return refuse('invalid_request', 'actor_token is empty');
  if (p.requestedTokenType !== undefined && p.requestedTokenType !== TOKEN_TYPE_ACCESS_TOKEN) {
    return refuse('invalid_request', `requested_token_type must be ${TOKEN_TYPE_ACCESS_TOKEN} (the only type issued)`);
  }
  return {
    ok: true,
    subjectKind: p.subjectTokenType === TOKEN_TYPE_ID_TOKEN ? 'id_token' : 'access_token',
    subjectToken: p.subjectToken,
    actorToken: p.actorToken,
  };
}

/**
 * The API the new token is for: `resource` (RFC 8707) and `audience` (RFC 8693 §2.1, here an API's identifier) name
 * the same one when both are sent; without either, the client's only allowed API; else the client must say.
 */
export function exchangeTarget(
  p: { resource?: string; audience?: string },
  allowedResources: readonly string[],
): { ok: true; identifier: string } | ExchangeRefusal {
  if (p.resource !== undefined && p.audience !== undefined && p.resource !== p.audience) {
    return refuse('invalid_target', 'resource and audience name different APIs: one token is issued for one API');
  }
  const named = p.resource ?? p.audience;
  if (named !== undefined) return { ok: true, identifier: named };
  if (allowedResources.length === 1) return { ok: true, identifier: allowedResources[0] };
  return refuse('invalid_request', 'Name the API the token is for: resource or audience');
}

/**
 * RFC 9449 applied to an exchange: a DPoP-bound subject or actor token is usable only with a proof of its key on this
 * request, and the new token is bound to the request's key whenever there is one. So a bound token never becomes an
 * unbound one, nor one bound to another key. Returns the key to bind the new token to (undefined: a Bearer token).
 */
export function exchangeBinding(
  bound: { subject?: string; actor?: string },
  proofJkt: string | undefined,
): { ok: true; jkt: string | undefined } | ExchangeRefusal {
  for (const [which, jkt] of [
    ['subject_token', bound.subject],
    ['actor_token', bound.actor],
  ] as const) {
    if (!jkt) continue;
    if (!proofJkt) return refuse('invalid_dpop_proof', `The ${which} is DPoP-bound: send a DPoP proof of its key`);
    if (proofJkt !== jkt) return refuse('invalid_dpop_proof', `The DPoP proof is not made with the key the ${which} is bound to`);
  }
  return { ok: true, jkt: proofJkt };
}

/**
 * Narrowing (docs/token-exchange.md): the new token's scopes are those of the subject token that the target API
 * defines; a requested `scope` must lie within them (a wider one is invalid_scope, never trimmed silently), and an
 * exchange that would leave no scope at all is refused. The user's roles narrow further afterwards
 * (narrowToRoleScopes), as for every user-delegated token.
 */
export function exchangeScopes(
  subjectScopes: readonly string[],
  apiScopes: readonly string[],
  requested: readonly string[] | undefined,
): { ok: true; scopes: string[] } | ExchangeRefusal {
  const available = subjectScopes.filter((s) => apiScopes.includes(s));
  if (requested !== undefined && requested.length > 0) {
    if (!isSubset(requested, available)) {
      return refuse('invalid_scope', 'scope is wider than the subject token grants for this API');
    }
    return { ok: true, scopes: [...requested] };
  }
  if (available.length === 0) return refuse('invalid_scope', 'The subject token carries no scope of this API');
  return { ok: true, scopes: available };
}

/**
 * RFC 8693 §4.1: with an actor the exchange is a delegation and the new token's `act` names the actor, the subject
 * token's own `act` nested inside (the most recent actor outermost). Without one it stays what the subject token was:
 * an `act` it carried is kept, never dropped.
 */
export function actFor(subjectAct: ActClaim | undefined, actor: { sub: string } | undefined): ActClaim | undefined {
  if (!actor) return subjectAct;
  return subjectAct ? { sub: actor.sub, act: subjectAct } : { sub: actor.sub };
}

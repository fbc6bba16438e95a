import type { OAuthClientRow } from '../../db/repositories/oauth-clients.repo';
import { OAuthError } from '../../errors';
import type { ServiceContext } from '../context';
import { requireProofFor } from './dpop-binding';
import { signResourceToken } from './resource-tokens.service';
import { permittedScopes, resolveResource } from './resource-resolver';
import type { TokenResponse } from './token-response';
import { formatScope, isSubset, parseScope } from './scopes';

/** Lifetime of a client_credentials token that names no API (aud = the issuer: for introspection only). */
const DEFAULT_TTL_SECONDS = 3600;

/**
 * client_credentials (RFC 6749 §4.4, CONTRACT §12): a confidential client acting on its own behalf. The answer is an
 * RFC 9068 JWT with sub = client_id and no refresh token. Without `resource`, a client allowed exactly one API gets a
 * token for it (RFC 8707 §2: the server's default); any other client gets one whose aud is the issuer. Without
 * `scope`, the token carries every scope of that API (or, naming no API, every scope of the client's own).
 */
export async function exchangeClientCredentials(
  ctx: ServiceContext,
  client: OAuthClientRow,
  input: { scope?: string; resource?: string; dpopJkt?: string },
): Promise<TokenResponse> {
  // Also enforced by the client's registration (client-policy.ts); a public client never holds this grant.
  if (client.type !== 'confidential') throw new OAuthError('unauthorized_client', 'client_credentials is for confidential clients only');
  // The client and its allowed APIs were read by its authentication, in one statement (issues 22 and 33).
  const resource = await resolveResource(ctx, client, input.resource, { fallback: 'only_allowed' });
  requireProofFor(resource, input.dpopJkt);
  const allowed = permittedScopes(client, resource).filter((s) => s !== 'openid');
  // Without `scope`, a token for an API carries that API's scopes (those the client may ask for), never the client's
  // own unrelated ones such as a preset's `read` (issue 32): only what the audience defines means anything to it.
  const byDefault = resource ? allowed.filter((s) => resource.scopes.includes(s)) : allowed;
  const asked = input.scope === undefined ? byDefault : parseScope(input.scope);
  // OpenID Connect scopes describe a user: a client acting for itself has none to consent to.
  if (asked.includes('openid')) throw new OAuthError('invalid_scope', 'openid is not available without a user');
  if (!isSubset(asked, allowed)) throw new OAuthError('invalid_scope', 'scope contains a value this client may not request');
  const scope = formatScope(asked);
  const { token, expiresIn } = await signResourceToken(ctx, {
    subject: client.clientId,
    clientId: client.clientId,
    audience: resource?.identifier ?? ctx.config.oidcIssuer,
    scope,
    ttlSeconds: resource?.accessTokenTtlSeconds ?? DEFAULT_TTL_SECONDS,
    dpopJkt: input.dpopJkt,
  });
  await ctx.events.record(ctx.db, {
    type: 'oauth.token.issued',
    actorId: null,
    subjectId: null,
    clientId: client.clientId,
    detail: { grant_type: 'client_credentials', ...(resource ? { resource: resource.identifier } : {}), scope },
  });
  return { access_token: token, token_type: input.dpopJkt ? 'DPoP' : 'Bearer', expires_in: expiresIn, scope };
}

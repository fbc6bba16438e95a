import type { ApiResourceRow } from '../../db/repositories/api-resources.repo';
import type { DbOrTrx } from '../../db';
import { touchGrant } from '../../db/repositories/oauth-grants.repo';
import type { ServiceContext } from '../context';
import { isOpenIdScope, issueIdToken } from '../oidc/id-token.service';
import { startSession, type IssuedTokens } from '../sessions.service';
import type { AuthorizationContext } from '../../db/repositories/authorization-context';
import type { OAuthClientRow } from '../../db/repositories/oauth-clients.repo';
import type { UserRow } from '../../db/repositories/users.repo';
import type { RequestMeta } from '../context';
import { dpopBinding, requireProofFor } from './dpop-binding';
import { signResourceToken, type ActClaim } from './resource-tokens.service';
import { narrowToRoleScopes } from './resources.service';
import { formatScope, parseScope } from './scopes';

export interface TokenResponse {
  access_token: string;
  /** RFC 9449 §5: `DPoP` when the access token is bound to the key of the request's DPoP proof. */
  token_type: 'Bearer' | 'DPoP';
  expires_in: number;
  /** Absent for client_credentials (RFC 6749 §4.4.3). */
  refresh_token?: string;
  scope: string;
  /** CONTRACT §9: only for grants whose scope contains `openid`. */
  id_token?: string;
  /** RFC 8693 §2.2.1: token exchange only. */
  issued_token_type?: string;
}

/** Spec §4.3: exactly these fields (plus the id_token of an OpenID grant); expires_in is the fixed 3600 although the JWT lives 24 h. */
export function presentTokens(
  ctx: ServiceContext,
  tokens: IssuedTokens,
  scope: string,
  idToken?: string,
  expiresIn?: number,
): TokenResponse {
  return {
    access_token: tokens.accessToken,
    token_type: tokens.dpopJkt ? 'DPoP' : 'Bearer',
    expires_in: expiresIn ?? ctx.config.oauthExpiresInSeconds,
    refresh_token: tokens.refreshToken,
    scope,
    ...(idToken ? { id_token: idToken } : {}),
  };
}

/**
 * RFC 8707: with a resource, the session's access token is replaced by an RFC 9068 JWT for that API (the refresh token
 * stays the spec's). Signed before the id_token, whose at_hash covers the access token actually returned. For a
 * resource with role-based access the token (and the answered `scope`) carries only the scopes the user's roles grant
 * (resources.service.ts narrowToRoleScopes); the session keeps the scope granted, so a role given later counts at the
 * next refresh and a role taken away stops counting there.
 */
export async function withResourceToken(
  ctx: ServiceContext,
  tokens: IssuedTokens,
  input: { resource: ApiResourceRow | undefined; userId: string; clientId: string; scope: string },
  db: DbOrTrx = ctx.db,
): Promise<{ tokens: IssuedTokens; expiresIn?: number; scope: string }> {
  if (!input.resource) return { tokens, scope: input.scope };
  const signed = await signUserResourceToken(
    ctx,
    { ...input, resource: input.resource, sessionId: tokens.sessionId, dpopJkt: tokens.dpopJkt },
    db,
  );
  return { tokens: { ...tokens, accessToken: signed.token }, expiresIn: signed.expiresIn, scope: signed.scope };
}

/**
 * THE user-delegated RFC 9068 token for an API, for every grant that issues one (withResourceToken above, and token
 * exchange, docs/token-exchange.md): an API requiring DPoP gets none without a key, the scopes are narrowed to what the
 * user's roles grant (narrowToRoleScopes), and the answered `scope` is what the token carries. `ttlSeconds` may only
 * shorten the API's token lifetime.
 */
export async function signUserResourceToken(
  ctx: ServiceContext,
  input: {
    resource: ApiResourceRow;
    userId: string;
    clientId: string;
    scope: string;
    sessionId: string;
    dpopJkt?: string;
    act?: ActClaim;
    ttlSeconds?: number;
  },
  db: DbOrTrx = ctx.db,
): Promise<{ token: string; expiresIn: number; scope: string }> {
  requireProofFor(input.resource, input.dpopJkt);
  const asked = parseScope(input.scope);
  const kept = await narrowToRoleScopes(db, { resource: input.resource, userId: input.userId, clientId: input.clientId, scopes: asked });
  const scope = kept.length === asked.length ? input.scope : formatScope(kept);
  const signed = await signResourceToken(ctx, {
    subject: input.userId,
    clientId: input.clientId,
    audience: input.resource.identifier,
    scope,
    ttlSeconds: Math.min(input.resource.accessTokenTtlSeconds, input.ttlSeconds ?? Infinity),
    sessionId: input.sessionId,
    dpopJkt: input.dpopJkt,
    act: input.act,
  });
  return { token: signed.token, expiresIn: signed.expiresIn, scope };
}

/**
 * The tokens of a user grant (authorization_code, device_code), built from what travelled with it: the session opens
 * with the context's scope, auth_time, amr and browser session and the API the tokens are for (`resource`, judged
 * again by the resolver: what its refreshes are for), bound to the request's DPoP key; `onSession` records
 * it on the code or device code (and may throw to roll back); then finishUserGrant, with the context's nonce.
 */
export async function issueUserGrant(
  ctx: ServiceContext,
  trx: DbOrTrx,
  input: {
    client: OAuthClientRow;
    user: UserRow;
    context: AuthorizationContext;
    resource: ApiResourceRow | undefined;
    meta: RequestMeta;
    dpopJkt: string | undefined;
  },
  onSession: (sessionId: string) => Promise<void>,
): Promise<{ tokens: IssuedTokens; expiresIn?: number; idToken?: string; scope: string }> {
  const { client, user, context } = input;
  const started = await startSession(ctx, trx, {
    user,
    client: { clientId: client.clientId, scope: context.scope, resource: input.resource?.identifier ?? null },
    meta: input.meta,
    auth: context.authTime ? { time: context.authTime, amr: context.amr ?? ['pwd'] } : undefined,
    browserSessionId: context.browserSessionId,
    dpop: dpopBinding(client, input.dpopJkt),
  });
  await onSession(started.sessionId);
  return finishUserGrant(ctx, trx, started, {
    resource: input.resource,
    userId: user.id,
    clientId: client.clientId,
    scope: context.scope,
    nonce: context.nonce,
  });
}

/**
 * The end of every user grant (authorization_code, device_code), in the grant's transaction once its session exists:
 * the grant is marked used, the access token is replaced by an RFC 9068 JWT when an API was asked for, and an id_token
 * is signed for an OpenID scope (after the access token it hashes).
 */
export async function finishUserGrant(
  ctx: ServiceContext,
  trx: DbOrTrx,
  started: IssuedTokens,
  input: { resource: ApiResourceRow | undefined; userId: string; clientId: string; scope: string; nonce?: string | null },
): Promise<{ tokens: IssuedTokens; expiresIn?: number; idToken?: string; scope: string }> {
  await touchGrant(trx, input.userId, input.clientId, ctx.clock.now());
  const { tokens, expiresIn, scope } = await withResourceToken(ctx, started, input, trx);
  const idToken = isOpenIdScope(scope)
    ? await issueIdToken(ctx, trx, {
        sessionId: tokens.sessionId,
        clientId: input.clientId,
        scope,
        accessToken: tokens.accessToken,
        nonce: input.nonce,
      })
    : undefined;
  return { tokens, expiresIn, idToken, scope };
}

import { findPushedRequest, insertPushedRequest, usePushedRequest } from '../../db/repositories/pushed-requests.repo';
import type { OAuthClientRow } from '../../db/repositories/oauth-clients.repo';
import { OAuthError } from '../../errors';
import { addSeconds } from '../../lib/clock';
import { randomToken, sha256Hex } from '../../lib/crypto';
import { redirectUriMatches } from '../../lib/redirect-uri';
import type { ServiceContext } from '../context';
import type { Principal } from '../principal';
import { checkAuthorizationParams, startAuthorization, type AuthorizeOutcome } from './authorize.service';
import { AUTHORIZATION_REQUEST_PARAMS, type AuthorizationRequestParams } from '../../declarations/authorization-request';

/**
 * Pushed authorization requests (RFC 9126, issue 34). The client sends its authorization request to POST
 * /api/oauth/par, authenticated as at the token endpoint; it is judged by the rules of /api/oauth/authorize
 * (authorize.service.ts checkAuthorizationParams) and kept for 60 seconds under a random `request_uri`. The browser
 * then goes to /api/oauth/authorize?client_id=…&request_uri=…, which uses the pushed parameters (any others are
 * ignored) and spends the request_uri once the request is decided: a sign-in on the way keeps it usable, a second
 * decision is refused.
 */

export const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:';
export const PUSHED_REQUEST_TTL_SECONDS = 60;

/**
 * RFC 9126 §2.2: the pushed parameters as /api/oauth/authorize would judge them, or the error they get (400, never
 * redirected). It reads and spends nothing, so the PAR route runs it also once a private_key_jwt assertion has verified
 * and before its `jti` is spent (docs/par.md): a refused request leaves the assertion usable for the corrected one.
 */
export async function judgePushedRequest(
  ctx: ServiceContext,
  client: OAuthClientRow,
  body: Record<string, unknown>,
  proofJkt?: string,
): Promise<AuthorizationRequestParams> {
  // RFC 9449 §10.1: a DPoP proof with the pushed request binds the code to its key, as `dpop_jkt` does. `proofJkt` is
  // its key's thumbprint, checked by the route before the client authenticated (proofKey), so that a client asked for
  // a nonce repeats the request before it is judged and without having spent its client assertion.
  // RFC 9126 §2.1: a pushed request must not itself name a request_uri.
  if (body.request_uri !== undefined)
    throw new OAuthError('invalid_request', 'request_uri is not allowed in a pushed authorization request');
  // The parameters declared once (declarations/authorization-request.ts), read back through the same schema.
  const params: AuthorizationRequestParams = {};
  for (const name of AUTHORIZATION_REQUEST_PARAMS) {
    const value = body[name];
    if (value === undefined) continue;
    if (typeof value !== 'string') throw new OAuthError('invalid_request', `${name} must be sent once`);
    params[name] = value;
  }
  const redirectUri = params.redirect_uri;
  if (!redirectUri) throw new OAuthError('invalid_request', 'redirect_uri is required');
  if (!redirectUriMatches(client.redirectUris, redirectUri))
    throw new OAuthError('invalid_request', 'redirect_uri is not registered for this client');
  if (proofJkt) {
    if (params.dpop_jkt !== undefined && params.dpop_jkt !== proofJkt) {
      throw new OAuthError('invalid_dpop_proof', 'dpop_jkt is not the thumbprint of the DPoP proof’s key');
    }
    params.dpop_jkt = proofJkt;
  }
  const checked = await checkAuthorizationParams(ctx, client, params);
  if (!checked.ok) throw new OAuthError(checked.error, checked.description, { status: 400 });
  return params;
}

/** RFC 9126 §2.2: the request judged (judgePushedRequest) and kept under a new single-use request_uri. */
export async function pushAuthorizationRequest(
  ctx: ServiceContext,
  client: OAuthClientRow,
  body: Record<string, unknown>,
  proofJkt?: string,
): Promise<{ request_uri: string; expires_in: number }> {
  const params = await judgePushedRequest(ctx, client, body, proofJkt);
  const requestUri = `${REQUEST_URI_PREFIX}${randomToken(32)}`;
  const now = ctx.clock.now();
  await insertPushedRequest(ctx.db, {
    requestUriHash: sha256Hex(requestUri),
    clientId: client.clientId,
    params,
    now,
    expiresAt: addSeconds(now, PUSHED_REQUEST_TTL_SECONDS),
  });
  return { request_uri: requestUri, expires_in: PUSHED_REQUEST_TTL_SECONDS };
}

const unusable = (description: string): AuthorizeOutcome => ({ kind: 'error', error: 'invalid_request', description });

/** /api/oauth/authorize with `request_uri` (RFC 9126 §4). */
export async function startPushedAuthorization(
  ctx: ServiceContext,
  query: Record<string, unknown>,
  principal: Principal | undefined,
  authorizeUrl: string,
): Promise<AuthorizeOutcome> {
  const pushed = await pushedRequestOf(ctx, query);
  if ('refusal' in pushed) return unusable(pushed.refusal);
  return startAuthorization(ctx, pushed.params, principal, authorizeUrl, {
    spend: async () =>
      (await usePushedRequest(ctx.db, pushed.hash, ctx.clock.now())) ? undefined : unusable('request_uri was already used or has expired'),
  });
}

/**
 * The parameters an authorize query's `request_uri` stands for (with its `client_id`), without spending it: the
 * authorize endpoint above, and the sign-in pages, which read where a pushed flow ends (CSP form-action).
 */
export async function pushedRequestOf(
  ctx: ServiceContext,
  query: Record<string, unknown>,
): Promise<{ hash: string; params: Record<string, unknown> } | { refusal: string }> {
  const { client_id: clientId, request_uri: requestUri } = query;
  if (typeof clientId !== 'string' || !clientId) return { refusal: 'client_id is required with request_uri, once' };
  if (typeof requestUri !== 'string' || !requestUri.startsWith(REQUEST_URI_PREFIX) || requestUri.length > 200) {
    return { refusal: 'request_uri must be one this server issued at /api/oauth/par' };
  }
  const hash = sha256Hex(requestUri);
  const pushed = await findPushedRequest(ctx.db, hash);
  if (!pushed || pushed.clientId !== clientId || pushed.usedAt || pushed.expiresAt <= ctx.clock.now()) {
    return { refusal: 'request_uri is unknown, expired, already used or not this client’s' };
  }
  // A stored request that does not read back as authorization parameters (a corrupted row) is refused, never judged.
  if (!pushed.params) return { refusal: 'request_uri names a malformed pushed request: push the request again' };
  return { hash, params: { ...pushed.params, client_id: clientId } };
}

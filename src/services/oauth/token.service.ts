import { withTransaction, type DbOrTrx } from '../../db';
import { findGrant } from '../../db/repositories/oauth-grants.repo';
import type { OAuthClientRow } from '../../db/repositories/oauth-clients.repo';
import { consumeAuthorizationCode, findAuthorizationCode, setAuthorizationCodeSession } from '../../db/repositories/oauth-codes.repo';
import { findApprovedDeviceCode } from '../../db/repositories/oauth-device-codes.repo';
import { revokeSession } from '../../db/repositories/sessions.repo';
import { findUserById } from '../../db/repositories/users.repo';
import { OAuthError } from '../../errors';
import { sha256Hex } from '../../lib/crypto';
import { verifyPkceS256 } from '../../lib/pkce';
import type { RequestMeta, ServiceContext } from '../context';
import { isOpenIdScope, issueIdToken, signIdToken } from '../oidc/id-token.service';
import { narrowScope, rotateVerifiedRefreshToken, type IssuedTokens } from '../sessions.service';
import { redirectUriMatches } from '../../lib/redirect-uri';
import { exchangeClientCredentials } from './client-credentials.service';
import { noteClientUsed } from './clients.service';
import { GRANT_TYPES, grantAllowed, TOKEN_EXCHANGE_GRANT } from '../../declarations/client-policy';
import { exchangeToken } from './token-exchange.service';
import { exchangeTarget } from './token-exchange-policy';
import { exchangeDeviceCode } from './device.service';
import { requireCodeKey, requireProofFor, requireRefreshKey, tokenRequestKey } from './dpop-binding';

export type { TokenResponse } from './token-response';
import { requireParam } from './params';
import { issueUserGrant, presentTokens, withResourceToken, type TokenResponse } from './token-response';
import { grantableScopes, judgeResource, resolveResource } from './resource-resolver';
import { consentShortfall, SHORTFALL_DESCRIPTIONS } from './grant-policy';
import { isSubset, parseScope } from './scopes';
import { isOneOf } from '../../lib/one-of';

type Exchange =
  | { ok: true; tokens: IssuedTokens; scope: string; userId: string; idToken?: string; expiresIn?: number }
  | { ok: false; description: string; error?: 'invalid_target' };

const INVALID_CODE = 'Authorization code is invalid, expired or already used';
const NOT_APPROVED_FOR_RESOURCE = `${SHORTFALL_DESCRIPTIONS.resource}: send the user through authorization with it`;

/** Whether the person's grant for this client names the API (grant-policy.ts, the rule authorize applies too). */
async function grantCoversResource(db: DbOrTrx, userId: string, client: OAuthClientRow, resource: string): Promise<boolean> {
  const grant = await findGrant(db, userId, client.clientId);
  const shortfall = consentShortfall(grant, client, { scopes: [], resource });
  return shortfall === undefined;
}

/**
 * authorization_code grant (RFC 6749 §4.1.3, RFC 7636 §4.6). The code is consumed with one conditional UPDATE,
 * so of N concurrent exchanges exactly one wins. A failed check after consumption still burns the code (it was
 * presented once); a database failure rolls everything back and burns nothing (CONTRACT §3).
 */
export async function exchangeAuthorizationCode(
  ctx: ServiceContext,
  client: OAuthClientRow,
  input: { code: string; redirectUri: string; codeVerifier: string; resource?: string; dpopJkt?: string },
  meta: RequestMeta,
): Promise<TokenResponse> {
  const now = ctx.clock.now();
  const codeHash = sha256Hex(input.code);
  // Judged before the code is consumed: a resource the client may not ask for burns nothing.
  const asked = await resolveResource(ctx, client, input.resource);
  const result = await withTransaction(ctx.db, async (trx): Promise<Exchange> => {
    // The code as it stood before this presentation: read first, so that a use committed while this presentation was
    // racing it (a concurrent exchange that won the row lock) is not taken for a replay after issuance (docs/oauth.md).
    const previous = await findAuthorizationCode(trx, codeHash);
    const code = await consumeAuthorizationCode(trx, codeHash, client.clientId, now, ctx.clock.now());
    if (!code) {
      // RFC 6749 §4.1.2: a code presented again after it was exchanged revokes the tokens that exchange issued. The
      // losers of a concurrent exchange are refused and revoke nothing: the code was not yet used when they came. Both
      // tests: the use was visible when this presentation looked, and it was taken before this presentation arrived (a
      // loser slow to look may see the winner's commit, but the winner took the code after the loser came). Its arrival
      // is when the server received it (meta.arrivedAt): a loser slow to authenticate came before the code was taken too.
      const replay = previous?.usedAt && previous.usedAt <= (meta.arrivedAt ?? now);
      if (replay && previous.clientId === client.clientId && previous.sessionId) {
        // One event per revocation: of a burst of replays only the one that ended the session writes a row (the
        // others would only queue behind it on the session row).
        if (await revokeSession(trx, previous.sessionId, now)) {
          ctx.logger.warn({ clientId: client.clientId, sessionId: previous.sessionId }, 'authorization code replay: session revoked');
          await ctx.events.record(trx, {
            type: 'oauth.code.replayed',
            actorId: null,
            subjectId: previous.userId,
            clientId: client.clientId,
            detail: { session_id: previous.sessionId },
          });
        }
      }
      return { ok: false, description: INVALID_CODE };
    }
    // RFC 9449 §10: a code bound to a DPoP key (dpop_jkt, or a proof at PAR) needs a proof of that key. Thrown, so the
    // transaction rolls back and the code stays usable: whoever lacks the key cannot burn it (docs/dpop.md).
    requireCodeKey(code.dpopJkt, input.dpopJkt);
    if (code.redirectUri !== input.redirectUri) return { ok: false, description: 'redirect_uri does not match the authorization request' };
    // CONTRACT §8: a redirect URI removed from the client since the code was issued invalidates the code.
    if (!redirectUriMatches(client.redirectUris, code.redirectUri))
      return { ok: false, description: 'redirect_uri is no longer registered for this client' };
    if (!verifyPkceS256(input.codeVerifier, code.codeChallenge)) return { ok: false, description: 'Invalid PKCE verifier' };
    // RFC 8707 §2.2: the token request may repeat the authorization request's resource, not name another one.
    if (asked && code.resource && asked.identifier !== code.resource) {
      return { ok: false, error: 'invalid_target', description: 'resource differs from the authorization request' };
    }
    // The code's API, judged again by the resolver (it may have gone, or been taken from the client, since authorize).
    const stored = asked ? undefined : await judgeResource(ctx, client, { granted: code.resource }, { db: trx });
    if (stored && !stored.ok) return stored;
    const resource = asked ?? stored?.resource;
    // CONTRACT §23: a token for an API only where the person approved this client for it (a code issued for sign-in
    // does not stretch to an API the client names here). The code is burned: it was presented once.
    if (resource && !(await grantCoversResource(trx, code.userId, client, resource.identifier))) {
      return { ok: false, error: 'invalid_target', description: NOT_APPROVED_FOR_RESOURCE };
    }
    const user = await findUserById(trx, code.userId);
    if (!user?.isActive) return { ok: false, description: INVALID_CODE };
    const { tokens, expiresIn, idToken, scope } = await issueUserGrant(
      ctx,
      trx,
      { client, user, context: code, resource, meta, dpopJkt: input.dpopJkt },
      (sessionId) => setAuthorizationCodeSession(trx, codeHash, sessionId),
    );
    return { ok: true, tokens, scope, userId: user.id, idToken, expiresIn };
  });
  if (!result.ok) throw new OAuthError(result.error ?? 'invalid_grant', result.description);
  // Counted in the metrics only (NOT_AUDITED): nothing is written, so no transaction to join.
  await ctx.events.record(ctx.db, {
    type: 'oauth.token.issued',
    actorId: result.userId,
    subjectId: result.userId,
    clientId: client.clientId,
    detail: { grant_type: 'authorization_code', session_id: result.tokens.sessionId, scope: result.scope },
  });
  return presentTokens(ctx, result.tokens, result.scope, result.idToken, result.expiresIn);
}

/**
 * refresh_token grant: rotation, the grace window, reuse detection (whole session revoked), client binding and
 * narrowing to the client's current scopes (CONTRACT §8) live in rotateVerifiedRefreshToken; the token is verified and
 * its scope narrowed once, here. Narrowing on request is not
 * supported: a `scope` parameter must name the scope the refresh would carry. Without a `resource` parameter the
 * access token is the spec's HS256 token, as for any token request without one (CONTRACT §12); the API the grant was
 * for is recorded on the session (its context) but never chosen for the client.
 */
export async function refreshAccessToken(
  ctx: ServiceContext,
  client: OAuthClientRow,
  input: { refreshToken: string; scope?: string; resource?: string; dpopJkt?: string },
): Promise<TokenResponse> {
  // RFC 8707: a refresh may ask for a token for an API; judged before rotation, so a refusal burns nothing.
  const resource = await resolveResource(ctx, client, input.resource);
  // Verified once; the checks below and the rotation all read this payload (issue 33).
  const payload = ctx.jwt.verifyRefresh(input.refreshToken, ctx.clock.now());
  // RFC 9449 §5.0: a bound refresh token needs a proof of its key, and an API requiring DPoP a proof; before rotation.
  requireRefreshKey(payload?.cnf?.jkt, input.dpopJkt);
  requireProofFor(resource, input.dpopJkt);
  const refreshing = { clientId: client.clientId, scopes: await grantableScopes(ctx, client) };
  // The granted scope narrowed to what the client may still hold (CONTRACT §8), once.
  const narrowed = narrowScope(payload?.scope, refreshing);
  if (input.scope !== undefined) {
    // Checked before rotation so that a refused request burns nothing.
    const granted = parseScope(narrowed ?? '');
    const asked = parseScope(input.scope);
    if (granted.length > 0 && (!isSubset(asked, granted) || !isSubset(granted, asked))) {
      throw new OAuthError('invalid_scope', 'The refresh grant keeps the scope originally granted');
    }
  }
  // CONTRACT §23: the refresh may name only an API the person approved this client for; judged before rotation, so a
  // refusal burns nothing. (A refresh token that does not verify is left to the rotation to refuse as invalid_grant.)
  const holder = resource ? payload?.userId : undefined;
  if (resource && holder && !(await grantCoversResource(ctx.db, holder, client, resource.identifier))) {
    throw new OAuthError('invalid_target', NOT_APPROVED_FOR_RESOURCE);
  }
  const result = payload
    ? await rotateVerifiedRefreshToken(ctx, { payload, scope: narrowed }, refreshing, input.dpopJkt)
    : ({ ok: false, reason: 'invalid' } as const);
  if (!result.ok) {
    if (result.reason === 'invalid_scope')
      throw new OAuthError('invalid_scope', 'The client is no longer registered for any scope of this grant');
    throw new OAuthError('invalid_grant', 'Refresh token is invalid, expired or already used');
  }
  const { tokens, expiresIn, scope } = await withResourceToken(ctx, result.tokens, {
    resource: holder ? resource : undefined,
    userId: holder ?? '',
    clientId: client.clientId,
    scope: result.scope ?? '',
  });
  const idTokenInput = { sessionId: tokens.sessionId, clientId: client.clientId, scope, accessToken: tokens.accessToken };
  const idToken = !isOpenIdScope(scope)
    ? undefined
    : result.idTokenSubject
      ? await signIdToken(ctx, result.idTokenSubject, idTokenInput)
      : await issueIdToken(ctx, ctx.db, idTokenInput);
  return presentTokens(ctx, tokens, scope, idToken, expiresIn);
}

/** The parameters of a token request (RFC 6749 §4.1.3, §6), already authenticated as `client`. */
export interface TokenRequest {
  grantType?: string;
  code?: string;
  redirectUri?: string;
  codeVerifier?: string;
  refreshToken?: string;
  scope?: string;
  /** RFC 8707 §2: the API the access token is for. */
  resource?: string;
  /** RFC 8628 §3.4. */
  deviceCode?: string;
  /** RFC 8693 §2.1 (token exchange). */
  subjectToken?: string;
  subjectTokenType?: string;
  actorToken?: string;
  actorTokenType?: string;
  requestedTokenType?: string;
  audience?: string;
}

/** The grant type, or the refusal of one this server does not support or this client is not registered for. */
function checkedGrantType(client: OAuthClientRow, request: TokenRequest): string {
  const grantType = requireParam(request.grantType, 'grant_type');
  if (!isOneOf(SUPPORTED_GRANTS, grantType)) {
    throw new OAuthError('unsupported_grant_type', `Supported grant types: ${SUPPORTED_GRANTS.join(', ')}`);
  }
  // CONTRACT §12: every grant is checked against the grant types the client is registered for.
  if (!grantAllowed(client, grantType)) {
    throw new OAuthError('unauthorized_client', `This client is not registered for the ${grantType} grant`);
  }
  return grantType;
}

/**
 * The API a token request's tokens would be for, read without spending anything (docs/dpop.md): the `resource` it
 * names (for token exchange, its target), else what the grant would fall back to (client_credentials: the client's only
 * allowed API; authorization_code: the API the unused code was issued for; device_code: the API of the approved
 * authorization). Undefined when none, or when the grant
 * itself will refuse the request (it answers that refusal after authentication, as before).
 */
async function resourceBeforeSpend(
  ctx: ServiceContext,
  client: OAuthClientRow,
  grantType: string,
  request: TokenRequest,
  /** authorization_code: the request's code, if unused (read once by the caller). */
  code: UnusedCode | undefined,
) {
  const named = async (identifier: string | undefined) => {
    const verdict = await judgeResource(ctx, client, { named: identifier });
    return verdict.ok ? verdict.resource : undefined;
  };
  switch (grantType) {
    case 'client_credentials':
      return resolveResource(ctx, client, request.resource, { fallback: 'only_allowed' }).catch(() => undefined);
    case TOKEN_EXCHANGE_GRANT: {
      const target = exchangeTarget(request, client.allowedResources);
      return target.ok ? named(target.identifier) : undefined;
    }
    case 'authorization_code': {
      if (request.resource !== undefined) return named(request.resource);
      if (!code?.resource) return undefined;
      const verdict = await judgeResource(ctx, client, { granted: code.resource });
      return verdict.ok ? verdict.resource : undefined;
    }
    case 'refresh_token':
      return named(request.resource);
    default: {
      // The device grant takes no `resource`: its tokens are for the API the approved authorization was for.
      const device =
        request.deviceCode === undefined
          ? undefined
          : await findApprovedDeviceCode(ctx.db, sha256Hex(request.deviceCode), client.clientId, ctx.clock.now());
      if (!device?.resource) return undefined;
      const verdict = await judgeResource(ctx, client, { granted: device.resource });
      return verdict.ok ? verdict.resource : undefined;
    }
  }
}

/** An authorization code of this client that is neither used nor expired, read (not consumed). */
async function unusedCodeOf(ctx: ServiceContext, client: OAuthClientRow, code: string) {
  const row = await findAuthorizationCode(ctx.db, sha256Hex(code));
  return row && row.clientId === client.clientId && !row.usedAt && row.expiresAt > ctx.clock.now() ? row : undefined;
}
type UnusedCode = Awaited<ReturnType<typeof unusedCodeOf>>;

/**
 * The refusals of a token request that depend on nothing single-use (docs/dpop.md "Nothing is spent by a refusal"):
 * the grant type, and a DPoP proof that the client, the API the tokens would be for, or a code bound to a key requires
 * and the request lacks. The token route runs them once the client's private_key_jwt assertion has verified and before
 * its `jti` is spent, so that the client can repeat the request with the same assertion and a proof. The grants check
 * the same again (a client authenticating by secret spends nothing).
 */
export async function refuseBeforeSpend(
  ctx: ServiceContext,
  client: OAuthClientRow,
  request: TokenRequest,
  proofJkt: string | undefined,
): Promise<void> {
  const grantType = checkedGrantType(client, request);
  tokenRequestKey(client, proofJkt);
  if (proofJkt !== undefined) return;
  const code = grantType === 'authorization_code' && request.code !== undefined ? await unusedCodeOf(ctx, client, request.code) : undefined;
  requireProofFor(await resourceBeforeSpend(ctx, client, grantType, request, code), undefined);
  if (code) requireCodeKey(code.dpopJkt, undefined);
}

/** POST /api/oauth/token: dispatches on grant_type (spec §5.8: authorization_code and refresh_token only). */
export async function grantTokens(
  ctx: ServiceContext,
  client: OAuthClientRow,
  request: TokenRequest,
  meta: RequestMeta,
  proofJkt?: string,
): Promise<TokenResponse> {
  const grantType = checkedGrantType(client, request);
  // RFC 9449 (docs/dpop.md): the key the tokens are bound to, when the request carries a DPoP proof (checked by the
  // route before the client authenticated: proofKey).
  const dpopJkt = tokenRequestKey(client, proofJkt);
  const response = await issueForGrant(ctx, client, grantType, request, meta, dpopJkt);
  await noteClientUsed(ctx, client);
  return response;
}

async function issueForGrant(
  ctx: ServiceContext,
  client: OAuthClientRow,
  grantType: string,
  request: TokenRequest,
  meta: RequestMeta,
  dpopJkt: string | undefined,
): Promise<TokenResponse> {
  switch (grantType) {
    case 'authorization_code':
      return exchangeAuthorizationCode(
        ctx,
        client,
        {
          code: requireParam(request.code, 'code'),
          redirectUri: requireParam(request.redirectUri, 'redirect_uri'),
          codeVerifier: requireParam(request.codeVerifier, 'code_verifier'),
          resource: request.resource,
          dpopJkt,
        },
        meta,
      );
    case 'refresh_token':
      return refreshAccessToken(ctx, client, {
        refreshToken: requireParam(request.refreshToken, 'refresh_token'),
        scope: request.scope,
        resource: request.resource,
        dpopJkt,
      });
    case 'client_credentials':
      return exchangeClientCredentials(ctx, client, { scope: request.scope, resource: request.resource, dpopJkt });
    case TOKEN_EXCHANGE_GRANT:
      return exchangeToken(ctx, client, { ...request, dpopJkt }, meta);
    default:
      return exchangeDeviceCode(ctx, client, { deviceCode: requireParam(request.deviceCode, 'device_code'), dpopJkt }, meta);
  }
}

/** Spec §5.8's two grants, then CONTRACT §12's, then RFC 8693's. */
const SUPPORTED_GRANTS = GRANT_TYPES;

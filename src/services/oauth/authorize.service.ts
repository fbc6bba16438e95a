import { randomUUID } from 'node:crypto';
import { withTransaction, type DbOrTrx } from '../../db';
import type { OAuthClientRow } from '../../db/repositories/oauth-clients.repo';
import { insertAuthorizationCode } from '../../db/repositories/oauth-codes.repo';
import type { AuthorizationContext } from '../../db/repositories/authorization-context';
import { findSessionById } from '../../db/repositories/sessions.repo';
import { findGrant } from '../../db/repositories/oauth-grants.repo';
import { insertAuthorizationRequest } from '../../db/repositories/oauth-requests.repo';
import type { OAuthErrorCode } from '../../errors';
import { addSeconds } from '../../lib/clock';
import { randomToken, sha256Hex } from '../../lib/crypto';
import { CODE_CHALLENGE_PATTERN } from '../../lib/pkce';
import type { ServiceContext } from '../context';
import type { Principal } from '../principal';
import { authorizeUrlAfterSignIn, needsFreshSignIn, parseOidcAuthorizeParams } from '../oidc/authorize-params';
import { redirectUriMatches } from '../../lib/redirect-uri';
import { enrolUrlFor, needsSecondFactorForAdmin } from '../mfa/policy';
import { grantAllowed } from '../../declarations/client-policy';
import { findClientForRequest } from './registration/client-metadata.service';
import { judgeResource, permittedScopes } from './resource-resolver';
import type { ApiResourceRow } from '../../db/repositories/api-resources.repo';
import { consentShortfall, SHORTFALL_DESCRIPTIONS } from './grant-policy';
import { formatScope, resolveRequestedScopes } from './scopes';

const MAX_STATE_LENGTH = 2048;
/** An RFC 7638 SHA-256 JWK thumbprint, base64url without padding (`dpop_jkt`, `cnf.jkt`). */
export const DPOP_JKT_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** What GET /api/oauth/authorize does next. */
export type AuthorizeOutcome =
  /** RFC 6749 §4.1.2.1: client or redirect_uri not verified: answer 400 here, never redirect. */
  | { kind: 'error'; error: OAuthErrorCode; description: string }
  /** Any other outcome is a 302 to `url`. */
  | { kind: 'redirect'; url: string };

type Single = { ok: true; value: string | undefined } | { ok: false };

/** RFC 6749 §3.1: a parameter sent more than once is invalid. */
function single(value: unknown): Single {
  if (value === undefined) return { ok: true, value: undefined };
  if (typeof value === 'string') return { ok: true, value };
  return { ok: false };
}

/** `redirect_uri` with the given parameters added to its query (its own query parameters are kept). */
export function buildRedirectUrl(redirectUri: string, params: Record<string, string | null | undefined>): string {
  const url = new URL(redirectUri);
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null) url.searchParams.set(key, value);
  }
  return url.toString();
}

/**
 * An authorization response (RFC 6749 §4.1.2 / §4.1.2.1) to the client's redirect URI. RFC 9207: every one, success or
 * error, carries `iss` = the issuer both discovery documents advertise, so a client talking to several servers can
 * tell which one answered (mix-up defence); discovery says `authorization_response_iss_parameter_supported: true`.
 */
export function authorizationResponseUrl(
  issuer: string,
  redirectUri: string,
  params:
    | { code: string; state: string | null | undefined }
    | { error: OAuthErrorCode; error_description: string; state: string | null | undefined },
): string {
  return buildRedirectUrl(redirectUri, { ...params, iss: issuer });
}

export function errorRedirect(
  issuer: string,
  redirectUri: string,
  error: OAuthErrorCode,
  description: string,
  state: string | null | undefined,
): string {
  return authorizationResponseUrl(issuer, redirectUri, { error, error_description: description, state });
}

/** Issues a one-time code (spec §2.7): only its SHA-256 is stored. Returns the plain code. */
export async function issueAuthorizationCode(
  ctx: ServiceContext,
  db: DbOrTrx,
  input: {
    clientId: string;
    userId: string;
    redirectUri: string;
    codeChallenge: string;
    /** What travels with the grant (its `dpopJkt`: the code is exchanged only with a DPoP proof of that key). */
    context: AuthorizationContext;
  },
): Promise<string> {
  const code = randomToken(32);
  const now = ctx.clock.now();
  await insertAuthorizationCode(db, {
    codeHash: sha256Hex(code),
    ...input,
    now,
    expiresAt: addSeconds(now, ctx.config.authorizationCodeTtlSeconds),
  });
  return code;
}

/** Client and redirect URI checks that must pass before anything may be sent to the redirect URI. */
export async function verifyClientAndRedirect(
  ctx: ServiceContext,
  query: Record<string, unknown>,
): Promise<{ ok: true; client: OAuthClientRow; redirectUri: string } | { ok: false; outcome: AuthorizeOutcome }> {
  const fail = (description: string) => ({
    ok: false as const,
    outcome: { kind: 'error' as const, error: 'invalid_request' as const, description },
  });
  const clientId = single(query.client_id);
  if (!clientId.ok) return fail('client_id must be sent once');
  if (!clientId.value) return fail('client_id is required');
  // CONTRACT §13: an https client_id may be a Client ID Metadata Document, fetched here (never a redirect on failure).
  const { client, refusal } = await findClientForRequest(ctx, clientId.value);
  if (refusal) return fail(`The client's metadata document cannot be used: ${refusal}`);
  if (!client || !client.isActive) return fail('Unknown or inactive client');

  const redirectUri = single(query.redirect_uri);
  if (!redirectUri.ok) return fail('redirect_uri must be sent once');
  if (!redirectUri.value) return fail('redirect_uri is required');
  // Exact string comparison, no normalisation: a trailing slash, case change or :443 is another URI (RFC 9700 §4.1.3).
  // RFC 8252 §7.3: a registered loopback URI also matches on any port.
  if (!redirectUriMatches(client.redirectUris, redirectUri.value)) return fail('redirect_uri is not registered for this client');
  return { ok: true, client, redirectUri: redirectUri.value };
}

/** An authorization request whose client and redirect URI are verified, judged in full (RFC 6749 §4.1.1, RFC 7636). */
export type CheckedAuthorizationRequest =
  | {
      ok: true;
      state: string | undefined;
      scopes: string[];
      resource: ApiResourceRow | undefined;
      codeChallenge: string;
      /** RFC 9449 §10: the thumbprint of the DPoP key the code is to be bound to, when the request names one. */
      dpopJkt: string | undefined;
      oidc: Extract<ReturnType<typeof parseOidcAuthorizeParams>, { ok: true }>['params'];
    }
  | { ok: false; error: OAuthErrorCode; description: string; state: string | undefined };

/**
 * Every rule of an authorization request after its client and redirect URI: state, response_type, the grant, PKCE
 * S256, resource and scope, the OpenID parameters. Shared by /api/oauth/authorize and the PAR endpoint (issue 34),
 * which judges a pushed request by the same rules before it stores it.
 */
export async function checkAuthorizationParams(
  ctx: ServiceContext,
  client: OAuthClientRow,
  query: Record<string, unknown>,
): Promise<CheckedAuthorizationRequest> {
  const stateParam = single(query.state);
  const state = stateParam.ok && stateParam.value ? stateParam.value : undefined;
  const refuse = (error: OAuthErrorCode, description: string): CheckedAuthorizationRequest => ({ ok: false, error, description, state });
  if (!stateParam.ok) return refuse('invalid_request', 'state must be sent once');
  if (state !== undefined && state.length > MAX_STATE_LENGTH) return refuse('invalid_request', 'state is too long');

  const responseType = single(query.response_type);
  if (!responseType.ok || !responseType.value) return refuse('invalid_request', 'response_type is required and must be sent once');
  if (responseType.value !== 'code') return refuse('unsupported_response_type', 'Only response_type=code is supported');
  if (!grantAllowed(client, 'authorization_code')) {
    return refuse('unauthorized_client', 'This client is not registered for the authorization_code grant');
  }

  const method = single(query.code_challenge_method);
  const challenge = single(query.code_challenge);
  if (!method.ok || !challenge.ok) return refuse('invalid_request', 'PKCE parameters must be sent once');
  if (!challenge.value) return refuse('invalid_request', 'code_challenge is required (PKCE with S256)');
  if (method.value !== 'S256') {
    return refuse(
      'invalid_request',
      method.value === undefined ? 'code_challenge_method is required and must be S256' : 'code_challenge_method must be S256',
    );
  }
  if (!CODE_CHALLENGE_PATTERN.test(challenge.value)) {
    return refuse('invalid_request', 'code_challenge must be 43 base64url characters (SHA-256 of the verifier)');
  }

  // Spec §4.3 makes every authorize parameter required; CONTRACT §23 amends it for `state`: PKCE S256 is required on
  // every request above and carries the CSRF defence (RFC 9700 §2.1), so a request without `state` (the MCP SDK sends
  // none) is answered without one. An empty `state=` is the same as none. `scope` stays required.
  const scopeParam = single(query.scope);
  if (!scopeParam.ok) return refuse('invalid_request', 'scope must be sent once');
  // RFC 8707: one resource per request, judged before the scope (the resource's scopes may be asked for with it).
  const resourceParam = single(query.resource);
  if (!resourceParam.ok) return refuse('invalid_target', 'Send at most one resource per request');
  const target = await judgeResource(ctx, client, { named: resourceParam.value });
  if (!target.ok) return refuse(target.error, target.description);
  const resource = target.resource;
  const requested = resolveRequestedScopes(scopeParam.value ?? '', permittedScopes(client, resource), resource?.scopes);
  if (!requested.ok) return refuse(requested.error, requested.description);

  // RFC 9449 §10: `dpop_jkt` binds the code to a DPoP key (its RFC 7638 SHA-256 thumbprint, base64url).
  const dpopJkt = single(query.dpop_jkt);
  if (!dpopJkt.ok) return refuse('invalid_request', 'dpop_jkt must be sent once');
  if (dpopJkt.value !== undefined && !DPOP_JKT_PATTERN.test(dpopJkt.value)) {
    return refuse('invalid_request', 'dpop_jkt must be the base64url SHA-256 JWK thumbprint of the DPoP key (43 characters)');
  }

  const oidc = parseOidcAuthorizeParams(query);
  if (!oidc.ok) return refuse(oidc.error, oidc.description);
  return {
    ok: true,
    state,
    scopes: requested.scopes,
    resource,
    codeChallenge: challenge.value,
    dpopJkt: dpopJkt.value,
    oidc: oidc.params,
  };
}

/** Options of a pushed authorization request (issue 34) that /api/oauth/authorize is completing. */
export interface PushedAuthorization {
  /**
   * Called once the request is about to be decided (a code, or the consent page): spends the request_uri, or answers
   * the outcome that refuses a second use.
   */
  spend(): Promise<AuthorizeOutcome | undefined>;
}

/**
 * GET /api/oauth/authorize (spec §4.3, CONTRACT §5). `principal` is the browser's first-party session, if any;
 * `authorizeUrl` is the full URL of this request, where the login page sends the browser back. `pushed` is set when
 * the parameters come from a pushed authorization request (RFC 9126).
 */
export async function startAuthorization(
  ctx: ServiceContext,
  query: Record<string, unknown>,
  principal: Principal | undefined,
  authorizeUrl: string,
  pushed?: PushedAuthorization,
): Promise<AuthorizeOutcome> {
  const verified = await verifyClientAndRedirect(ctx, query);
  if (!verified.ok) return verified.outcome;
  const { client, redirectUri } = verified;
  // RFC 9126 §5 / §6 (issue 34): read from the client row and the settings snapshot already in memory.
  if (!pushed && (client.requirePushedAuthorizationRequests || ctx.settings.current.values.require_pushed_authorization_requests)) {
    return {
      kind: 'error',
      error: 'invalid_request',
      description: 'This client must push its authorization request to /api/oauth/par first',
    };
  }

  const checked = await checkAuthorizationParams(ctx, client, query);
  const state = checked.state;
  const redirectError = (error: OAuthErrorCode, description: string): AuthorizeOutcome => ({
    kind: 'redirect',
    url: errorRedirect(ctx.config.oidcIssuer, redirectUri, error, description, state),
  });
  if (!checked.ok) return redirectError(checked.error, checked.description);
  const { scopes, resource } = checked;
  const oidc = { params: checked.oidc };
  const { prompt, loginHint } = oidc.params;
  const loginRedirect = (returnTo: string): AuthorizeOutcome => ({
    kind: 'redirect',
    url: `${ctx.config.baseUrl}/login?${new URLSearchParams({ return_to: returnTo, ...(loginHint ? { login_hint: loginHint } : {}) })}`,
  });

  // Tokens issued to OAuth clients never stand for the user here: only a first-party session may authorize.
  if (!principal || principal.clientId) {
    // OIDC Core 3.1.2.6: prompt=none never shows a page.
    if (prompt.none) return redirectError('login_required', 'The user is not signed in');
    return loginRedirect(authorizeUrl);
  }

  // MFA_REQUIRED_FOR_ADMINS (CONTRACT §10), as /login and /consent apply it: an administrator whose session has no
  // second factor enrols first and comes back here, even when a grant would let the code go out without a page.
  if (needsSecondFactorForAdmin(ctx.settings.current.values, principal)) {
    if (prompt.none) return redirectError('interaction_required', 'An administrator must set up a second factor first');
    return { kind: 'redirect', url: `${ctx.config.baseUrl}${enrolUrlFor(authorizeUrl)}` };
  }

  const now = ctx.clock.now();
  const browserSession = await findSessionById(ctx.db, principal.sessionId);
  const authTime = browserSession?.authTime ?? now;
  if (needsFreshSignIn(oidc.params, authTime, now)) {
    if (prompt.none) return redirectError('login_required', 'The user must sign in again');
    return loginRedirect(authorizeUrlAfterSignIn(authorizeUrl));
  }
  // What travels with the grant from here to its tokens (the pending request, the code, the session).
  const context: AuthorizationContext = {
    scope: formatScope(scopes),
    resource: resource?.identifier ?? null,
    nonce: oidc.params.nonce ?? null,
    authTime,
    amr: browserSession?.amr ?? ['pwd'],
    // Back-Channel Logout (issue 34): the session the code opens belongs to this browser session (the id_token's sid).
    browserSessionId: browserSession?.id ?? null,
    dpopJkt: checked.dpopJkt ?? null,
  };
  // A pushed request is spent here, once the person is signed in and the request is decided (RFC 9126 §4: once).
  const spent = pushed ? await pushed.spend() : undefined;
  if (spent) return spent;

  const codeChallenge = checked.codeChallenge;
  const grant = await findGrant(ctx.db, principal.userId, client.clientId);
  // CONTRACT §23: the grant must cover the scopes, the API and (for a self-registered client) the redirect URI.
  const shortfall = consentShortfall(grant, client, { scopes, resource: resource?.identifier, redirectUri });
  if (!shortfall && !prompt.consent) {
    const code = await withTransaction(ctx.db, async (trx) => {
      // A code issued without the consent page is audited (issue 30): the person approved once, this reuses it.
      await ctx.events.record(trx, {
        type: 'oauth.consent.reused',
        actorId: principal.userId,
        subjectId: principal.userId,
        clientId: client.clientId,
        detail: { scopes, resource: resource?.identifier ?? null, redirect_uri: redirectUri, prompt_none: prompt.none },
      });
      return issueAuthorizationCode(ctx, trx, {
        clientId: client.clientId,
        userId: principal.userId,
        redirectUri,
        codeChallenge,
        context,
      });
    });
    return { kind: 'redirect', url: authorizationResponseUrl(ctx.config.oidcIssuer, redirectUri, { code, state }) };
  }
  if (prompt.none) return redirectError('consent_required', SHORTFALL_DESCRIPTIONS[shortfall ?? 'scope']);

  const requestId = randomUUID();
  await insertAuthorizationRequest(ctx.db, {
    id: requestId,
    userId: principal.userId,
    clientId: client.clientId,
    redirectUri,
    state: state ?? null,
    codeChallenge,
    now,
    expiresAt: addSeconds(now, ctx.config.pendingAuthorizationTtlSeconds),
    context,
  });
  // CONTRACT §15: the consent page speaks the language the client asked for (OIDC Core 3.1.2.1 ui_locales).
  const uiLocales = new URL(authorizeUrl).searchParams.get('ui_locales')?.slice(0, 256);
  const consent = new URLSearchParams({ request_id: requestId, ...(uiLocales ? { ui_locales: uiLocales } : {}) });
  return { kind: 'redirect', url: `${ctx.config.baseUrl}/consent?${consent}` };
}

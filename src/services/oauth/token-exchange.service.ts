import { randomUUID } from 'node:crypto';
import { withTransaction } from '../../db';
import type { OAuthClientRow } from '../../db/repositories/oauth-clients.repo';
import { loadPrincipal } from '../../db/repositories/principal.repo';
import { findLiveClientSessionOfSid, insertExchangedSession } from '../../db/repositories/sessions.repo';
import { OAuthError } from '../../errors';
import { jose } from '../../lib/jose';
import type { RequestMeta, ServiceContext } from '../context';
import { introspectToken } from '../oidc/introspection.service';
import { publicKeyFor } from '../oidc/signing-keys.service';
import { TOKEN_EXCHANGE_GRANT } from '../../declarations/client-policy';
import { RESOURCE_TOKEN_MAX_TTL_SECONDS, type ActClaim } from './resource-tokens.service';
import { resolveResource } from './resource-resolver';
import { formatScope, parseScope } from './scopes';
import {
  actFor,
  checkExchangeParams,
  exchangeBinding,
  exchangeScopes,
  exchangeTarget,
  TOKEN_TYPE_ACCESS_TOKEN,
  type ExchangeRefusal,
} from './token-exchange-policy';
import { signUserResourceToken, type TokenResponse } from './token-response';

/** The parameters of a token-exchange request (RFC 8693 §2.1), the client already authenticated. */
export interface TokenExchangeInput {
  subjectToken?: string;
  subjectTokenType?: string;
  actorToken?: string;
  actorTokenType?: string;
  requestedTokenType?: string;
  resource?: string;
  audience?: string;
  scope?: string;
  /** The key of the request's DPoP proof, verified by the token endpoint (RFC 9449). */
  dpopJkt?: string;
}

/** What a verified, live subject token says. */
interface Subject {
  userId: string;
  /** The live session the token stands for (an exchanged token's session is born under it). */
  sessionId: string;
  clientId: string;
  scopes: string[];
  jkt?: string;
  act?: ActClaim;
}

const enforce = <T extends { ok: true }>(verdict: T | ExchangeRefusal): T => {
  if (!verdict.ok) throw new OAuthError(verdict.error, verdict.description);
  return verdict;
};

const INVALID_SUBJECT = 'subject_token is invalid, expired or revoked';

/**
 * An access token (the spec's or an RFC 9068 one) is judged exactly as introspection judges it: signature, expiry, a
 * live session and user, an active client, a still registered API. It must stand for a user in an OAuth client's
 * session: a first-party token or a client's own client_credentials token is not exchanged.
 */
async function accessTokenSubject(ctx: ServiceContext, caller: OAuthClientRow, token: string): Promise<Subject> {
  const found = await introspectToken(ctx, { clientId: caller.clientId }, { token, tokenTypeHint: 'access_token' });
  if (!found.active || found.token_type === 'refresh_token') throw new OAuthError('invalid_grant', INVALID_SUBJECT);
  if (!found.client_id)
    throw new OAuthError('invalid_grant', 'subject_token is a first-party token: only OAuth clients’ tokens are exchanged');
  if (!found.sid) throw new OAuthError('invalid_grant', 'subject_token does not stand for a user (a client’s own token)');
  return {
    userId: found.sub,
    sessionId: found.sid,
    clientId: found.client_id,
    scopes: parseScope(found.scope ?? ''),
    jkt: found.cnf?.jkt,
    act: 'act' in found ? found.act : undefined,
  };
}

/**
 * An id_token is for its audience only (OIDC Core §2): the caller must be that client, and the session its `sid`
 * names must still be live. The exchange carries the scopes of that session's grant.
 */
async function idTokenSubject(ctx: ServiceContext, caller: OAuthClientRow, token: string): Promise<Subject> {
  const now = ctx.clock.now();
  const { decodeProtectedHeader, jwtVerify } = jose();
  let claims: { sub: string; sid: string };
  try {
    if (token.length > 8192) throw new Error('too long');
    const { kid } = decodeProtectedHeader(token);
    const key = typeof kid === 'string' ? await publicKeyFor(ctx, kid) : undefined;
    if (!key) throw new Error('unknown key');
    const { payload } = await jwtVerify(token, key.key, {
      algorithms: [key.alg],
      issuer: ctx.config.oidcIssuer,
      audience: caller.clientId,
      typ: 'JWT',
      currentDate: now,
      requiredClaims: ['sub', 'sid', 'iat', 'exp'],
    });
    if (typeof payload.sub !== 'string' || typeof payload.sid !== 'string') throw new Error('claims');
    claims = { sub: payload.sub, sid: payload.sid };
  } catch {
    throw new OAuthError('invalid_grant', 'subject_token is not a valid id_token issued to this client');
  }
  const session = await findLiveClientSessionOfSid(ctx.db, { sid: claims.sid, userId: claims.sub, clientId: caller.clientId, now });
  if (!session || !(await loadPrincipal(ctx.db, session.id, claims.sub, now))) {
    throw new OAuthError('invalid_grant', 'The session of this id_token has ended');
  }
  return { userId: claims.sub, sessionId: session.id, clientId: caller.clientId, scopes: parseScope(session.scope ?? '') };
}

/** §21: the actor is an access token of the calling client (its client_credentials token, or a user's token of it). */
async function actorOf(ctx: ServiceContext, caller: OAuthClientRow, token: string): Promise<{ sub: string; user: boolean; jkt?: string }> {
  const found = await introspectToken(ctx, { clientId: caller.clientId }, { token, tokenTypeHint: 'access_token' });
  if (!found.active || found.token_type === 'refresh_token') {
    throw new OAuthError('invalid_grant', 'actor_token is invalid, expired or revoked');
  }
  if (found.client_id !== caller.clientId) throw new OAuthError('invalid_grant', 'actor_token was not issued to this client');
  return { sub: found.sub, user: found.sub !== caller.clientId, jkt: found.cnf?.jkt };
}

/**
 * RFC 8693 token exchange (CONTRACT-level policy in docs/token-exchange.md): a confidential client allowed the grant
 * turns a user's token this server issued into an RFC 9068 token for one API it is allowed, with scopes no wider
 * than the subject token's for that API (and the user's roles), bound to the same DPoP key if the subject was bound,
 * and `act` naming the actor of a delegation. The new token has a session of its own, the caller's, born under the
 * subject's session: it ends when that one ends, and the caller revoking it ends nothing else. Audited as
 * `oauth.token_exchanged`.
 */
export async function exchangeToken(
  ctx: ServiceContext,
  client: OAuthClientRow,
  input: TokenExchangeInput,
  meta: RequestMeta,
): Promise<TokenResponse & { issued_token_type: string }> {
  // Also enforced by the client's registration (client-policy.ts).
  if (client.type !== 'confidential') throw new OAuthError('unauthorized_client', 'Token exchange is for confidential clients only');
  const params = enforce(checkExchangeParams(input));
  // Before any token is looked at: a target the client may not ask for refuses the request whatever it carries.
  const target = enforce(exchangeTarget(input, client.allowedResources));
  const resource = await resolveResource(ctx, client, target.identifier);
  const subject =
    params.subjectKind === 'id_token'
      ? await idTokenSubject(ctx, client, params.subjectToken)
      : await accessTokenSubject(ctx, client, params.subjectToken);
  const actor = params.actorToken !== undefined ? await actorOf(ctx, client, params.actorToken) : undefined;
  const { jkt } = enforce(exchangeBinding({ subject: subject.jkt, actor: actor?.jkt }, input.dpopJkt));
  const requested = input.scope === undefined ? undefined : parseScope(input.scope);
  const { scopes } = enforce(exchangeScopes(subject.scopes, resource.scopes, requested));
  const act = actFor(subject.act, actor);

  const now = ctx.clock.now();
  const sessionId = randomUUID();
  const ttlSeconds = Math.min(resource.accessTokenTtlSeconds, RESOURCE_TOKEN_MAX_TTL_SECONDS);
  const issued = await withTransaction(ctx.db, async (trx) => {
    const born = await insertExchangedSession(trx, {
      id: sessionId,
      parentId: subject.sessionId,
      clientId: client.clientId,
      scope: formatScope(scopes),
      ip: meta.ip,
      userAgent: meta.userAgent,
      now,
      expiresAt: new Date(now.getTime() + ttlSeconds * 1000),
    });
    // The subject's session ended between the check and now.
    if (!born) throw new OAuthError('invalid_grant', INVALID_SUBJECT);
    const remaining = Math.floor((born.getTime() - now.getTime()) / 1000);
    const signed = await signUserResourceToken(
      ctx,
      {
        resource,
        userId: subject.userId,
        clientId: client.clientId,
        scope: formatScope(scopes),
        sessionId,
        dpopJkt: jkt,
        act,
        ttlSeconds: remaining,
      },
      trx,
    );
    await ctx.events.record(trx, {
      type: 'oauth.token_exchanged',
      actorId: actor?.user ? actor.sub : null,
      subjectId: subject.userId,
      clientId: client.clientId,
      detail: {
        grant_type: TOKEN_EXCHANGE_GRANT,
        resource: resource.identifier,
        scope: signed.scope,
        subject_client_id: subject.clientId,
        subject_type: params.subjectKind,
        ...(act ? { act } : {}),
        delegation: actor !== undefined,
        session_id: sessionId,
        parent_session_id: subject.sessionId,
        dpop_bound: jkt !== undefined,
      },
    });
    return signed;
  });
  return {
    access_token: issued.token,
    issued_token_type: TOKEN_TYPE_ACCESS_TOKEN,
    token_type: jkt ? 'DPoP' : 'Bearer',
    expires_in: issued.expiresIn,
    scope: issued.scope,
  };
}

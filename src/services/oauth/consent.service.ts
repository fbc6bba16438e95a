import { withTransaction, type DbOrTrx } from '../../db';
import { findClientById, type OAuthClientRow } from '../../db/repositories/oauth-clients.repo';
import {
  consumeAuthorizationRequest,
  findPendingAuthorizationRequest,
  type AuthorizationRequestRow,
} from '../../db/repositories/oauth-requests.repo';
import { forbidden, notFound } from '../../errors';
import type { ServiceContext } from '../context';
import type { Principal } from '../principal';
import { authorizationResponseUrl, errorRedirect, issueAuthorizationCode } from './authorize.service';
import { redirectUriMatches } from '../../lib/redirect-uri';
import type { ApiResourceRow } from '../../db/repositories/api-resources.repo';
import { permittedScopes, resolveResource } from './resource-resolver';
import { clientRegistrationEnabled } from './registration/client-metadata.service';
import { recordConsent } from './grant-record';
import { contextOf } from '../../db/repositories/authorization-context';
import { isSubset, parseScope } from './scopes';

export interface ConsentInfo {
  request: AuthorizationRequestRow;
  client: OAuthClientRow;
  scopes: string[];
  /** CONTRACT §23: consent names each API the tokens would be for (none for a sign-in). */
  resources: Array<{ identifier: string; name: string }>;
}

/** A pending request is visible only to the user it was created for; anything else is a 404 (CONTRACT §5). */
const requestNotFound = () => notFound('Authorization request');

/** Consent is given by the user in person: a token issued to an OAuth client cannot approve anything. */
function assertFirstParty(principal: Principal): void {
  if (principal.clientId) throw forbidden('Consent requires a first-party session');
}

/**
 * The client of a pending request, re-checked against its current registration: the request was verified at
 * authorize, but an admin may since have deactivated the client or removed the redirect URI or a scope. Nothing may
 * then be sent to that URI (RFC 6749 §3.1.2, §4.1.2.1), so such a request is answered like an unknown one.
 */
async function clientStillAllowing(
  ctx: ServiceContext,
  db: DbOrTrx,
  request: AuthorizationRequestRow,
): Promise<{ client: OAuthClientRow; resource: ApiResourceRow | undefined }> {
  const client = await findClientById(db, request.clientId);
  if (!client?.isActive || !clientRegistrationEnabled(ctx, client)) throw requestNotFound();
  if (!redirectUriMatches(client.redirectUris, request.redirectUri)) throw requestNotFound();
  // The API asked for must still exist and be allowed (CONTRACT §12); its scopes count with the client's.
  const resource = await resolveResource(ctx, client, request.resource ?? undefined, { db, refuse: () => requestNotFound() });
  if (!isSubset(parseScope(request.scope), permittedScopes(client, resource))) throw requestNotFound();
  return { client, resource };
}

export async function getConsentInfo(ctx: ServiceContext, principal: Principal, requestId: string): Promise<ConsentInfo> {
  assertFirstParty(principal);
  const request = await findPendingAuthorizationRequest(ctx.db, requestId, principal.userId, ctx.clock.now());
  if (!request) throw requestNotFound();
  const { client, resource } = await clientStillAllowing(ctx, ctx.db, request);
  const resources = resource ? [{ identifier: resource.identifier, name: resource.name }] : [];
  return { request, client, scopes: parseScope(request.scope), resources };
}

/**
 * The user's answer to a pending request: the request is consumed (one conditional UPDATE, so of two answers exactly
 * one counts) and `answer` runs in the same transaction with the client still allowed to ask.
 */
async function answerRequest(
  ctx: ServiceContext,
  principal: Principal,
  requestId: string,
  answer: (trx: DbOrTrx, request: AuthorizationRequestRow, client: OAuthClientRow, now: Date) => Promise<string>,
): Promise<string> {
  assertFirstParty(principal);
  const now = ctx.clock.now();
  return withTransaction(ctx.db, async (trx) => {
    const request = await consumeAuthorizationRequest(trx, requestId, principal.userId, now);
    if (!request) throw requestNotFound();
    const { client } = await clientStillAllowing(ctx, trx, request);
    return answer(trx, request, client, now);
  });
}

/** Approve: the pending request is consumed, the grant recorded and a code issued. */
export async function approveAuthorization(ctx: ServiceContext, principal: Principal, requestId: string): Promise<string> {
  return answerRequest(ctx, principal, requestId, async (trx, request, client, now) => {
    const requested = parseScope(request.scope);
    // CONTRACT §23: the grant records the API and the redirect URI the person saw on the page.
    const granted = await recordConsent(
      trx,
      principal.userId,
      client.clientId,
      { scopes: requested, resource: request.resource, redirectUri: request.redirectUri },
      now,
    );
    await ctx.events.record(trx, {
      type: 'oauth.consent.granted',
      actorId: principal.userId,
      subjectId: principal.userId,
      clientId: client.clientId,
      detail: {
        scopes: requested,
        granted_scopes: granted.scopes,
        resource: request.resource ?? null,
        redirect_uri: request.redirectUri,
      },
    });
    const code = await issueAuthorizationCode(ctx, trx, {
      clientId: client.clientId,
      userId: principal.userId,
      redirectUri: request.redirectUri,
      codeChallenge: request.codeChallenge,
      // What travelled with the request travels on with the code, as it was.
      context: contextOf(request),
    });
    return authorizationResponseUrl(ctx.config.oidcIssuer, request.redirectUri, { code, state: request.state });
  });
}

/** Deny: the request is consumed and the client learns access_denied with its state (spec §4.3). */
export async function denyAuthorization(ctx: ServiceContext, principal: Principal, requestId: string): Promise<string> {
  return answerRequest(ctx, principal, requestId, async (_trx, request) =>
    errorRedirect(ctx.config.oidcIssuer, request.redirectUri, 'access_denied', 'The user denied the request', request.state),
  );
}

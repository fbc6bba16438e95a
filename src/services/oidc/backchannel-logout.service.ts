import { withTransaction } from '../../db';
import {
  findBackchannelDeliveryWork,
  listBackchannelDeliveries,
  markBackchannelDeliveryFailed,
  recordBackchannelAttempt,
  type BackchannelAttemptOutcome,
  type BackchannelDeliveryRow,
} from '../../db/repositories/backchannel-logout.repo';
import { badRequest, type Said } from '../../errors';
import { say } from '../../i18n';
import { checkOutboundTarget, OutboundRefused, type OutboundPolicy } from '../../lib/outbound-http';
import type { ServiceContext } from '../context';
import { outboundWords } from '../outbound-words';
import { postDelivery, type DeliveryOptions } from '../webhooks/post-delivery';
import { webhookAddressRules, webhookOutboundPolicy } from '../webhooks/webhook-policy';
import { signWithCurrentKey } from './signing-keys.service';

/**
 * OpenID Connect Back-Channel Logout 1.0 (issue 34, docs/backchannel-logout.md). Sessions end in one place, the
 * `session_ended` trigger of the backchannel_logout migration, which writes a delivery per client holding a session
 * under the browser session that ended and enqueues its first attempt. Each attempt (the graphile-worker task
 * `backchannel_logout_deliver`, services/webhooks/queue.ts) signs a fresh logout token and POSTs it through
 * lib/outbound-http.ts under the webhooks' address rules and retry schedule.
 */
export const BACKCHANNEL_LOGOUT_TASK = 'backchannel_logout_deliver';

/** Back-Channel Logout 1.0 §2.4: the event that makes a JWT a logout token. */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/** A logout token lives two minutes (the specification's example): each attempt signs a new one. */
export const LOGOUT_TOKEN_TTL_SECONDS = 120;

const URI_MAX_LENGTH = 2048;

/**
 * What a client may register as `backchannel_logout_uri` (Back-Channel Logout 1.0 §2.2 and the outbound rules): an
 * absolute https URL (http only to a loopback host outside production), no fragment, no credentials, and a host that
 * resolves to public addresses only in production unless webhook_allow_private. Checked again at every attempt.
 * Returns the message naming what is wrong, or undefined.
 */
export async function backchannelLogoutUriProblem(
  ctx: ServiceContext,
  uri: string,
  overrides: Partial<OutboundPolicy> = {},
): Promise<{ message: string; said?: Said } | undefined> {
  if (uri.length === 0 || uri.length > URI_MAX_LENGTH) return say('backchannelLength');
  if (/[\s\x00-\x1f\x7f]/.test(uri)) return say('backchannelWhitespace');
  if (uri.includes('#')) return say('backchannelFragment');
  try {
    await checkOutboundTarget(uri, webhookOutboundPolicy(webhookAddressRules(ctx), uri, overrides));
    return undefined;
  } catch (err) {
    if (!(err instanceof OutboundRefused)) throw err;
    const words = outboundWords(ctx.config.isProduction, err, ['backchannelHttps', 'backchannelHttpsOrLoopback']);
    // The field's name before an outbound refusal in English (the console shows the message beside the field).
    return err.reason === 'scheme' ? words : { ...words, message: `backchannel_logout_uri: ${words.message}` };
  }
}

/** The 400 of the admin API for a refused `backchannel_logout_uri` (null clears it and is always fine). */
export async function assertBackchannelLogoutUriAllowed(ctx: ServiceContext, uri: string | null | undefined): Promise<void> {
  if (uri === null || uri === undefined) return;
  const problem = await backchannelLogoutUriProblem(ctx, uri);
  if (problem) throw badRequest('Invalid client', [{ path: 'backchannel_logout_uri', ...problem }]);
}

/**
 * Back-Channel Logout 1.0 §2.4: a JWT with `typ: logout+jwt`, iss, aud (the client), iat, exp, jti, events, sid and sub,
 * and never a nonce, signed with the id_tokens' key (the client verifies it with the same JWKS).
 */
export async function signLogoutToken(ctx: ServiceContext, input: { clientId: string; userId: string; sid: string }): Promise<string> {
  // Wall-clock time, not ctx.clock: the client compares iat and exp with its own clock (as webhook timestamps).
  const iat = Math.floor(Date.now() / 1000);
  return signWithCurrentKey(
    ctx,
    { events: { [BACKCHANNEL_LOGOUT_EVENT]: {} }, sid: input.sid },
    { typ: 'logout+jwt', subject: input.userId, audience: input.clientId, iat, ttlSeconds: LOGOUT_TOKEN_TTL_SECONDS },
  );
}

export type BackchannelDeliveryOptions = DeliveryOptions;

/**
 * One attempt of one delivery: a fresh logout token POSTed as `logout_token=` (application/x-www-form-urlencoded).
 * A 2xx is delivered (audited `oidc.backchannel_logout.delivered`); anything else is retried on the webhooks' schedule
 * and, once the retries are spent, audited `oidc.backchannel_logout.failed`. Deliveries no longer pending are left alone.
 */
export async function attemptBackchannelLogout(
  ctx: ServiceContext,
  deliveryId: string,
  options: BackchannelDeliveryOptions = {},
): Promise<BackchannelAttemptOutcome | undefined> {
  const work = await findBackchannelDeliveryWork(ctx.db, deliveryId);
  if (!work || work.delivery.status !== 'pending') return undefined;
  const { delivery } = work;
  const fail = async (error: string) => {
    await withTransaction(ctx.db, async (trx) => {
      if (await markBackchannelDeliveryFailed(trx, deliveryId, error)) await recordOutcome(ctx, trx, delivery, 'failed', error);
    });
    return undefined;
  };
  if (!work.uri) return fail('the client no longer has a backchannel_logout_uri');
  if (!work.clientActive) return fail('the client is deactivated');

  const body = new URLSearchParams({
    logout_token: await signLogoutToken(ctx, { clientId: delivery.clientId, userId: delivery.userId, sid: delivery.sid }),
  }).toString();
  const request = {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'service-sso-backchannel-logout' },
    body,
  };
  const posted = await postDelivery(ctx, work.uri, request, options, delivery.attempts);
  const outcome: BackchannelAttemptOutcome = posted.outcome;
  const { responseStatus, retryInSeconds: retryIn } = outcome;
  const delivered = outcome.status === 'delivered';
  const error = posted.refusal;
  await withTransaction(ctx.db, async (trx) => {
    const row = await recordBackchannelAttempt(trx, deliveryId, outcome);
    if (row && outcome.status !== 'pending') await recordOutcome(ctx, trx, row, outcome.status, outcome.error);
  });
  if (!delivered) {
    ctx.logger.info(
      { client: delivery.clientId, delivery: deliveryId, status: responseStatus, error, retryInSeconds: retryIn },
      retryIn === null ? 'back-channel logout failed' : 'back-channel logout attempt failed, will retry',
    );
  }
  return outcome;
}

async function recordOutcome(
  ctx: ServiceContext,
  trx: Parameters<typeof recordBackchannelAttempt>[0],
  delivery: BackchannelDeliveryRow,
  status: 'delivered' | 'failed',
  error: string | null,
): Promise<void> {
  await ctx.events.record(trx, {
    type: status === 'delivered' ? 'oidc.backchannel_logout.delivered' : 'oidc.backchannel_logout.failed',
    actorId: null,
    subjectId: delivery.userId,
    clientId: delivery.clientId,
    detail: {
      delivery_id: delivery.id,
      sid: delivery.sid,
      attempts: delivery.attempts,
      ...(error ? { error } : {}),
    },
  });
}

/** The client's recent deliveries (the console's application page and GET …/backchannel-logout-deliveries). */
export async function recentBackchannelDeliveries(ctx: ServiceContext, clientId: string, limit = 20): Promise<BackchannelDeliveryRow[]> {
  return listBackchannelDeliveries(ctx.db, clientId, limit);
}

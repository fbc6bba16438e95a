import { Webhook } from 'standardwebhooks';
import { withTransaction } from '../../db';
import { findDeliveryWork, markDeliveryFailed, recordDeliveryAttempt, type AttemptOutcome } from '../../db/repositories/webhooks.repo';
import { OutboundRefused } from '../../lib/outbound-http';
import type { AuditEventRow } from '../../db/repositories/audit-events.repo';
import type { ServiceContext } from '../context';
import { presentActor, presentSubject } from '../audit.service';
import { POINTS_AT_THIS_SERVER, secretPurpose } from './subscriptions.service';
import { postDelivery, type DeliveryOptions } from './post-delivery';
import { pointsAtThisServer, RESPONSE_EXCERPT_CHARS } from './webhook-policy';

export type { DeliveryOptions } from './post-delivery';

/** Keys a payload never carries, whatever an event's detail holds (the event bus drops them already). */
const SECRET_KEY = /password|secret|token|hash|verifier|^code$|otp|cookie|authorization/i;

/** `data` of a delivery: the audit event as GET /api/admin/audit-events shows it, fields listed one by one. */
export function presentEventData(event: AuditEventRow) {
  return {
    id: event.id,
    type: event.type,
    occurred_at: event.occurredAt.toISOString(),
    actor_id: event.actorId,
    actor: presentActor(event),
    subject_id: event.subjectId,
    subject: presentSubject(event),
    client_id: event.clientId,
    ip: event.ip,
    user_agent: event.userAgent,
    request_id: event.requestId,
    detail: Object.fromEntries(Object.entries(event.detail).filter(([key]) => !SECRET_KEY.test(key))),
  };
}

/** Standard Webhooks signature header: one `v1,…` per secret in use (the previous one during its grace period). */
export function signatureHeader(secrets: readonly string[], msgId: string, timestamp: Date, body: string): string {
  return secrets.map((secret) => new Webhook(secret).sign(msgId, timestamp, body)).join(' ');
}

function excerpt(body: Buffer): string | null {
  if (!body.length) return null;
  return body.toString('utf8', 0, Math.min(body.length, RESPONSE_EXCERPT_CHARS * 4)).slice(0, RESPONSE_EXCERPT_CHARS);
}

/**
 * One attempt of one delivery (the graphile-worker task `webhook_deliver`, services/webhooks/queue.ts): signs the
 * event, POSTs it through lib/outbound-http.ts, and records the outcome together with the next attempt's job in one
 * transaction. Deliveries no longer pending (delivered, failed, or replaced by a redelivery) are left alone.
 */
export async function attemptDelivery(
  ctx: ServiceContext,
  deliveryId: string,
  options: DeliveryOptions = {},
): Promise<AttemptOutcome | undefined> {
  const work = await findDeliveryWork(ctx.db, deliveryId);
  if (!work || work.delivery.status !== 'pending') return undefined;
  const { delivery, subscription, event } = work;
  if (!subscription.enabled || !event) {
    await markDeliveryFailed(ctx.db, deliveryId, !event ? 'the audit event was pruned' : 'the subscription is disabled');
    ctx.metrics.webhookDeliveries.inc({ outcome: 'failed' });
    return undefined;
  }

  const data = presentEventData(event);
  const body = JSON.stringify({ type: data.type, timestamp: data.occurred_at, data });
  const secrets = [ctx.sealer.open(subscription.secretSealed, secretPurpose(subscription.id))];
  // Wall-clock time, not ctx.clock: receivers compare webhook-timestamp with their own clock (5 min tolerance).
  const now = new Date();
  if (subscription.previousSecretSealed && subscription.previousSecretExpiresAt && subscription.previousSecretExpiresAt > now) {
    secrets.push(ctx.sealer.open(subscription.previousSecretSealed, secretPurpose(subscription.id)));
  }
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'service-sso-webhooks',
    // CONTRACT §17: the audit event's id, the same on every attempt (receivers deduplicate by it).
    'webhook-id': delivery.eventId,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': signatureHeader(secrets, delivery.eventId, now, body),
  };

  // CONTRACT §23: a URL that names this server (saved before the rule, or written around the API) is never called;
  // its own addresses are refused by the policy's refuseAddress when the connection is made.
  const posted = await postDelivery(ctx, subscription.url, { method: 'POST', headers, body }, options, delivery.attempts, () => {
    if (pointsAtThisServer(ctx.config, subscription.url)) throw new OutboundRefused('refused_address', POINTS_AT_THIS_SERVER);
  });
  const outcome: AttemptOutcome = { ...posted.outcome, responseExcerpt: posted.response && excerpt(posted.response.body) };
  const { responseStatus, retryInSeconds: retryIn } = outcome;
  const delivered = outcome.status === 'delivered';
  const error = posted.refusal;
  await withTransaction(ctx.db, (trx) => recordDeliveryAttempt(trx, deliveryId, outcome));
  ctx.metrics.webhookDeliveries.inc({ outcome: delivered ? 'delivered' : retryIn === null ? 'failed' : 'retry' });
  if (!delivered) {
    ctx.logger.info(
      { webhook: subscription.id, delivery: deliveryId, event: delivery.eventId, status: responseStatus, error, retryInSeconds: retryIn },
      retryIn === null ? 'webhook delivery failed' : 'webhook delivery attempt failed, will retry',
    );
  }
  return outcome;
}

import { changedFields } from '../events';
import { messagesFor, say } from '../../i18n';
import { randomBytes, randomUUID } from 'node:crypto';
import { withTransaction } from '../../db';
import {
  deleteWebhookSubscription,
  findWebhookSubscription,
  insertWebhookSubscription,
  listWebhookDeliveries,
  listWebhookSubscriptions,
  resetDeliveryForRedelivery,
  rotateWebhookSecret as rotateSecretRow,
  updateWebhookSubscription,
  type DeliveryStatus,
  type WebhookDeliveryRow,
  type WebhookSubscriptionRow,
} from '../../db/repositories/webhooks.repo';
import { badRequest, found, notFound } from '../../errors';
import { addSeconds } from '../../lib/clock';
import { checkOutboundTarget, OutboundRefused, type OutboundPolicy } from '../../lib/outbound-http';
import type { ServiceContext } from '../context';
import { outboundWords } from '../outbound-words';
import { pointsAtThisServer, PREVIOUS_SECRET_GRACE_SECONDS, webhookAddressRules, webhookOutboundPolicy } from './webhook-policy';

/** CONTRACT §23: why a URL naming this server is refused (when saved and at every attempt). */
export const POINTS_AT_THIS_SERVER = messagesFor('en').validation.webhookPointsHere;

/** Input validated at the edge (routes/webhooks/webhooks.schemas.ts): event patterns are known, the URL parses. */
export interface WebhookInput {
  url: string;
  events: string[];
  enabled?: boolean;
  description?: string;
}

/** The API's messages, declared in the catalogue (a console form shows them in the page's language). */
const API = messagesFor('en').validation;

/** The sealing purpose binds a secret to its subscription (a sealed value cannot be moved to another row). */
export const secretPurpose = (subscriptionId: string) => `webhook-secret:${subscriptionId}`;

/** Standard Webhooks secrets: `whsec_` and the base64 of 32 random bytes (the library's accepted format). */
function generateSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * CONTRACT §17, checked when the URL is saved (and again by lib/outbound-http.ts at every attempt, since DNS
 * answers change): scheme, credentials and every address the host resolves to now.
 */
export async function assertWebhookUrlAllowed(ctx: ServiceContext, url: string, overrides: Partial<OutboundPolicy> = {}): Promise<void> {
  if (pointsAtThisServer(ctx.config, url)) throw badRequest('Invalid webhook URL', [{ path: 'url', ...say('webhookPointsHere') }]);
  try {
    await checkOutboundTarget(url, webhookOutboundPolicy(webhookAddressRules(ctx), url, overrides));
  } catch (err) {
    if (!(err instanceof OutboundRefused)) throw err;
    throw badRequest('Invalid webhook URL', [
      { path: 'url', ...outboundWords(ctx.config.isProduction, err, ['urlHttps', 'urlHttpsOrLoopback']) },
    ]);
  }
}

export async function listWebhooks(ctx: ServiceContext): Promise<WebhookSubscriptionRow[]> {
  return listWebhookSubscriptions(ctx.db);
}

export async function getWebhook(ctx: ServiceContext, id: string): Promise<WebhookSubscriptionRow> {
  return found(await findWebhookSubscription(ctx.db, id), 'Webhook');
}

/** The plain secret is returned here and by rotateWebhookSecret only; the row keeps it sealed. */
export async function createWebhook(
  ctx: ServiceContext,
  input: WebhookInput,
): Promise<{ webhook: WebhookSubscriptionRow; secret: string }> {
  await assertWebhookUrlAllowed(ctx, input.url);
  const id = randomUUID();
  const secret = generateSecret();
  const webhook = await withTransaction(ctx.db, async (trx) => {
    const row = await insertWebhookSubscription(trx, {
      id,
      url: input.url,
      events: input.events,
      enabled: input.enabled ?? true,
      description: input.description ?? '',
      secretSealed: ctx.sealer.seal(secret, secretPurpose(id)),
      now: ctx.clock.now(),
    });
    await ctx.events.record(trx, { type: 'webhook.created', subjectId: id, detail: { url: row.url, events: row.events } });
    return row;
  });
  return { webhook, secret };
}

export async function updateWebhook(ctx: ServiceContext, id: string, patch: Partial<WebhookInput>): Promise<WebhookSubscriptionRow> {
  if (patch.url !== undefined) await assertWebhookUrlAllowed(ctx, patch.url);
  return withTransaction(ctx.db, async (trx) => {
    const webhook = found(await updateWebhookSubscription(trx, id, patch, ctx.clock.now()), 'Webhook');
    await ctx.events.record(trx, {
      type: 'webhook.changed',
      subjectId: id,
      detail: { fields: changedFields(patch) },
    });
    return webhook;
  });
}

export async function deleteWebhook(ctx: ServiceContext, id: string): Promise<void> {
  await withTransaction(ctx.db, async (trx) => {
    if (!(await deleteWebhookSubscription(trx, id))) throw notFound('Webhook');
    await ctx.events.record(trx, { type: 'webhook.deleted', subjectId: id });
  });
}

/**
 * A new secret signs from now on; the previous one adds a second signature for PREVIOUS_SECRET_GRACE_SECONDS so a
 * receiver can switch without losing deliveries (Standard Webhooks allows several signatures in the header).
 */
export async function rotateWebhookSecret(ctx: ServiceContext, id: string): Promise<{ webhook: WebhookSubscriptionRow; secret: string }> {
  const secret = generateSecret();
  const now = ctx.clock.now();
  const sealed = ctx.sealer.seal(secret, secretPurpose(id));
  const webhook = await withTransaction(ctx.db, async (trx) => {
    const row = found(await rotateSecretRow(trx, id, sealed, addSeconds(now, PREVIOUS_SECRET_GRACE_SECONDS), now), 'Webhook');
    await ctx.events.record(trx, { type: 'webhook.secret_rotated', subjectId: id });
    return row;
  });
  return { webhook, secret };
}

export interface DeliveryPage {
  deliveries: WebhookDeliveryRow[];
  nextCursor: string | null;
}

const CURSOR = /^[1-9][0-9]{0,18}$/;

/** GET /api/admin/webhooks/:id/deliveries: newest first; the cursor is the last id of a page (opaque, base64url). */
export async function listDeliveries(
  ctx: ServiceContext,
  id: string,
  query: { status?: DeliveryStatus; cursor?: string; limit: number },
): Promise<DeliveryPage> {
  await getWebhook(ctx, id);
  let beforeId: string | undefined;
  if (query.cursor !== undefined) {
    beforeId = Buffer.from(query.cursor, 'base64url').toString('utf8');
    if (!CURSOR.test(beforeId)) throw badRequest('Query is invalid', [{ path: 'cursor', message: API.cursorUnknown }]);
  }
  // Events this instance emitted are written in the background: let them land (and fan out) first.
  await ctx.events.idle?.();
  const rows = await listWebhookDeliveries(ctx.db, id, { status: query.status, beforeId }, query.limit + 1);
  const deliveries = rows.slice(0, query.limit);
  const last = deliveries[deliveries.length - 1];
  return { deliveries, nextCursor: rows.length > query.limit && last ? Buffer.from(last.id, 'utf8').toString('base64url') : null };
}

/** One attempt now, whatever the delivery's status; if it fails, the retry schedule continues from the attempts made. */
export async function redeliver(ctx: ServiceContext, id: string, deliveryId: string): Promise<WebhookDeliveryRow> {
  return withTransaction(ctx.db, async (trx) => {
    const delivery = found(await resetDeliveryForRedelivery(trx, id, deliveryId), 'Delivery');
    await ctx.events.record(trx, {
      type: 'webhook.redelivered',
      subjectId: id,
      detail: { delivery_id: deliveryId, event_id: delivery.eventId },
    });
    return delivery;
  });
}

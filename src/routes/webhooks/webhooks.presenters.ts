import type { WebhookDeliveryRow, WebhookSubscriptionRow } from '../../db/repositories/webhooks.repo';

/** A subscription, field by field: the sealed secrets never leave the repository row. */
export function presentWebhook(w: WebhookSubscriptionRow) {
  return {
    id: w.id,
    url: w.url,
    events: w.events,
    enabled: w.enabled,
    description: w.description,
    created_at: w.createdAt.toISOString(),
    updated_at: w.updatedAt.toISOString(),
  };
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function presentDelivery(d: WebhookDeliveryRow) {
  return {
    id: d.id,
    event_id: d.eventId,
    event_type: d.eventType,
    status: d.status,
    attempts: d.attempts,
    last_attempt_at: iso(d.lastAttemptAt),
    last_response_status: d.lastResponseStatus,
    last_response_excerpt: d.lastResponseExcerpt,
    last_error: d.lastError,
    next_attempt_at: d.status === 'pending' ? iso(d.nextAttemptAt) : null,
    delivered_at: iso(d.deliveredAt),
    created_at: d.createdAt.toISOString(),
  };
}

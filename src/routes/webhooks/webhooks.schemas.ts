import { z } from 'zod';
import { isValidEventPattern } from '../../services/webhooks/webhook-policy';
import { timestampField, timestampFields } from '../common.schemas';

export const webhookIdParams = z.object({ webhookId: z.uuid({ error: 'webhookId must be a uuid' }) });

export const deliveryParams = z.object({
  webhookId: z.uuid({ error: 'webhookId must be a uuid' }),
  deliveryId: z.string().regex(/^[1-9][0-9]{0,18}$/, 'deliveryId must be a delivery id'),
});

/**
 * CONTRACT §17. The URL's form only; the address rules (https, loopback http outside production, no private targets
 * in production) depend on the configuration and on DNS, so services/webhooks/subscriptions.service.ts applies them.
 */
const urlField = z
  .string({ error: 'url must be a string' })
  .trim()
  .max(2048, 'url is too long (at most 2048 characters)')
  .refine((u) => URL.canParse(u), { message: 'url must be an absolute URL' });

const eventsField = z
  .array(
    z.string({ error: 'each event must be a string' }).max(100).refine(isValidEventPattern, {
      message: 'each event must be an audit event type, a prefix ending in ".*" or "*" (docs/webhooks.md)',
    }),
    { error: 'events must be an array of strings' },
  )
  .min(1, 'at least one event type is required')
  .max(50, 'at most 50 event types')
  .transform((events) => [...new Set(events)]);

const descriptionField = z
  .string({ error: 'description must be a string' })
  .trim()
  .max(500, 'description is too long (at most 500 characters)')
  .refine((v) => !/[\p{Cc}\u2028\u2029\u202A-\u202E\u2066-\u2069]/u.test(v), {
    message: 'description must be one line without control characters',
  });

const enabledField = z.boolean({ error: 'enabled must be a boolean' });

export const createWebhookBody = z.strictObject({
  url: urlField,
  events: eventsField,
  enabled: enabledField.optional(),
  description: descriptionField.optional(),
});

export const updateWebhookBody = z
  .strictObject({
    url: urlField.optional(),
    events: eventsField.optional(),
    enabled: enabledField.optional(),
    description: descriptionField.optional(),
  })
  .refine((b) => Object.values(b).some((v) => v !== undefined), { message: 'Nothing to update' });

export const deliveriesQuery = z.object({
  status: z.enum(['pending', 'delivered', 'failed'], { error: 'status must be pending, delivered or failed' }).optional(),
  cursor: z
    .string({ error: 'cursor must be a single string' })
    .regex(/^[A-Za-z0-9_-]{1,40}$/, 'cursor is not one this server gave out')
    .optional()
    .meta({ description: 'next_cursor of the previous page (opaque)' }),
  limit: z.coerce
    .number({ error: 'limit must be a number' })
    .int('limit must be an integer')
    .min(1, 'limit must be at least 1')
    .default(50)
    .transform((n) => Math.min(n, 200))
    .meta({ description: 'Deliveries per page (default 50; more than 200 is capped to 200)' }),
});

/** A subscription: never its secret. */
export const webhookBody = z
  .strictObject({
    id: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    enabled: z.boolean(),
    description: z.string(),
    ...timestampFields,
  })
  .meta({ id: 'Webhook' });

export const webhookEnvelope = z.strictObject({ webhook: webhookBody });
export const webhooksBody = z.strictObject({ webhooks: z.array(webhookBody) });
export const webhookWithSecretBody = z.strictObject({
  webhook: webhookBody,
  secret: z.string().meta({ description: 'The signing secret (whsec_…), shown only in this answer' }),
});

const nullableTime = timestampField.nullable();

export const deliveryBody = z
  .strictObject({
    id: z.string(),
    event_id: z.string().meta({ description: 'The audit event id, sent as webhook-id' }),
    event_type: z.string(),
    status: z.enum(['pending', 'delivered', 'failed']),
    attempts: z.number().int(),
    last_attempt_at: nullableTime,
    last_response_status: z.number().int().nullable(),
    last_response_excerpt: z.string().nullable().meta({ description: 'The first 200 characters of the last answer' }),
    last_error: z.string().nullable(),
    next_attempt_at: nullableTime,
    delivered_at: nullableTime,
    created_at: timestampField,
  })
  .meta({ id: 'WebhookDelivery' });

export const deliveriesBody = z.strictObject({ deliveries: z.array(deliveryBody), next_cursor: z.string().nullable() });
export const deliveryEnvelope = z.strictObject({ delivery: deliveryBody });

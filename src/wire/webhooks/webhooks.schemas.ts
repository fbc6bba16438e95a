import { z } from 'zod';
import { messagesFor } from '../../i18n';
import { isValidEventPattern } from '../../services/webhooks/webhook-policy';
import { cursorField, pageLimitField, timestampField, timestampFields } from '../common.schemas';

/** The API's messages, declared in the catalogue (CONTRACT §18: a form shows them in the page's language). */
const API = messagesFor('en').validation;

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
  .string({ error: API.urlString })
  .trim()
  .max(2048, API.urlTooLong)
  .refine((u) => URL.canParse(u), { message: API.urlAbsolute });

const eventsField = z
  .array(
    z.string({ error: 'each event must be a string' }).max(100).refine(isValidEventPattern, {
      message: API.eventPattern,
    }),
    { error: 'events must be an array of strings' },
  )
  .min(1, API.eventsRequired)
  .max(50, API.eventsTooMany)
  .transform((events) => [...new Set(events)]);

const descriptionField = z
  .string({ error: 'description must be a string' })
  .trim()
  .max(500, API.descriptionTooLong)
  .refine((v) => !/[\p{Cc}\u2028\u2029\u202A-\u202E\u2066-\u2069]/u.test(v), {
    message: API.descriptionOneLine,
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
  status: z.enum(['pending', 'delivered', 'failed'], { error: API.deliveryStatus }).optional(),
  cursor: cursorField.optional(),
  limit: pageLimitField(50, 200).meta({ description: 'Deliveries per page (default 50; more than 200 is capped to 200)' }),
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

/** The wire shapes (what the API answers, and what the console's pages render). */
export type Webhook = z.output<typeof webhookBody>;
export type WebhookDelivery = z.output<typeof deliveryBody>;

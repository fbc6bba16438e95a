import { z } from 'zod';
import type { Webhook } from '../../wire/webhooks/webhooks.schemas';
import { checkbox, formMapping, optionalText, text } from '../action';
import type { WebhookValues } from './webhooks.view';

/** The webhook form's fields, as the API's body (checked by the API's own schemas) and from its wire shape. */
export const webhookForm = z.object({ url: text(2100), events: text(6000), description: text(600), enabled: checkbox() });
export const deliveriesForm = z.object({ status: text(20), cursor: optionalText(60) });

export const webhookBody = formMapping({
  form: webhookForm,
  input: (f) => ({ ...f, events: f.events.split(/[\s,]+/).filter(Boolean) }),
  field: 'url',
});

export const valuesOf = (w?: Webhook): WebhookValues => ({
  url: w?.url ?? '',
  events: w?.events.join('\n') ?? '',
  description: w?.description ?? '',
  enabled: w?.enabled ?? true,
});

/** The deliveries filter's status (anything else: all). */
export const deliveryStatus = (s: string) => (s === 'pending' || s === 'delivered' || s === 'failed' ? s : '');

import { webhooksApi as api } from '../../routes/webhooks/webhooks.router';
import type { Webhook } from '../../wire/webhooks/webhooks.schemas';
import { DELIVERABLE_EVENT_TYPES } from '../../declarations/event-types';
import { asking, consoleAction, consoleListing, consolePage, consoleRouter, pageEnv, redirect, saying, type FieldErrors } from '../action';
import { deliveriesForm, deliveryStatus, valuesOf, webhookBody } from './webhooks.form';
import * as views from './webhooks.view';

/**
 * Console pages of webhooks (CONTRACT §17, §14), each built from its /api/admin/webhooks endpoint. The signing secret
 * appears only in the answer to the create or rotate post: never in a URL, a cookie, a redirect target or a later page.
 */
const x = () => pageEnv().t.console.webhooks;
const detail = (p: { webhookId: string }) => `/admin/webhooks/${p.webhookId}`;
const form = (data: { webhook?: Webhook; values?: views.WebhookValues; errors?: FieldErrors }) =>
  consolePage(
    views.renderWebhookForm,
    { ...data, values: data.values ?? valuesOf(data.webhook), errors: data.errors ?? {}, eventTypes: DELIVERABLE_EVENT_TYPES },
    data.webhook ? data.webhook.description || x().webhook : x().create,
  );
const link = (p: { webhookId: string }, status: string, extra: Record<string, string> = {}) =>
  `${detail(p)}/deliveries?${new URLSearchParams({ ...(status ? { status } : {}), ...extra })}`;
const urlOf = (r: { webhook: Webhook }) => r.webhook.url;

export const createConsoleWebhooksRouter = consoleRouter('webhooks', () => [
  ...consoleListing(api, '/webhooks', {
    list: (r) => consolePage(views.renderWebhooks, r, x().title),
    form: () => form({}),
    create: {
      ...webhookBody,
      invalid: ({ values, errors }) => form({ values, errors }),
      done: (r) => consolePage(views.renderWebhookSecret, { ...r, heading: x().createdTitle, rotated: false }, x().createdTitle, 201),
    },
  }),
  consoleAction(api.get, { path: '/webhooks/:webhookId', done: (r) => form({ webhook: r.webhook }) }),
  consoleAction(api.update, {
    path: '/webhooks/:webhookId',
    ...webhookBody,
    invalid: async ({ values, errors }, { call, params, inRequest }) => {
      const { webhook } = await call(api.get, { params });
      return inRequest(() => form({ webhook, values, errors }));
    },
    done: (_r, { params }) => redirect(detail(params), x().saved),
  }),
  consoleAction(api.rotateSecret, {
    path: '/webhooks/:webhookId/rotate',
    confirm: asking(api.get, urlOf, saying('rotate', x)),
    // A webhook deleted in another tab: said on the list (never a secret in a redirect).
    back: () => '/admin/webhooks',
    done: (r) => consolePage(views.renderWebhookSecret, { ...r, heading: x().rotatedHeading, rotated: true }, x().rotatedTitle),
  }),
  consoleAction(api.remove, {
    path: '/webhooks/:webhookId/delete',
    confirm: asking(api.get, urlOf, saying('delete', x)),
    back: () => '/admin/webhooks',
    done: () => redirect('/admin/webhooks', x().deleted),
  }),
  consoleAction(api.deliveries, {
    path: '/webhooks/:webhookId/deliveries',
    form: deliveriesForm,
    input: (f) => ({ status: deliveryStatus(f.status) || undefined, cursor: f.cursor || undefined, limit: 50 }),
    field: 'cursor',
    invalid: async ({ values, errors }, { call, params }) => {
      const title = x().deliveries;
      const status = deliveryStatus(values.status);
      // The filter has no field of the cursor: its refusal is said about the whole form.
      const said = { _form: errors.cursor ?? errors.status ?? Object.values(errors)[0] };
      const props = { webhook: (await call(api.get, { params })).webhook, deliveries: [], status, first: link(params, status) };
      return consolePage(views.renderDeliveries, props, title, 400, said);
    },
    done: async (r, { call, params, form: f }) => {
      const title = x().deliveries;
      const status = deliveryStatus(f.status);
      const next = r.next_cursor ? link(params, status, { cursor: r.next_cursor }) : undefined;
      const props = { webhook: (await call(api.get, { params })).webhook, deliveries: r.deliveries, status, next };
      return consolePage(views.renderDeliveries, { ...props, first: f.cursor ? link(params, status) : undefined }, title);
    },
  }),
  consoleAction(api.redeliver, {
    path: '/webhooks/:webhookId/deliveries/:deliveryId/redeliver',
    back: (p) => `${detail(p)}/deliveries`,
    done: (r, { params }) => redirect(`${detail(params)}/deliveries`, x().requeued(r.delivery.event_type)),
  }),
]);

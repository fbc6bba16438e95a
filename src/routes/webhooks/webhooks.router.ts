import * as webhooks from '../../services/webhooks/subscriptions.service';
import { endpointsWith, idNotFound, removed, servingRouter } from '../route';
import { presentDelivery, presentWebhook } from './webhooks.presenters';
import {
  createWebhookBody,
  deliveriesBody,
  deliveriesQuery,
  deliveryEnvelope,
  deliveryParams,
  updateWebhookBody,
  webhookEnvelope,
  webhookIdParams,
  webhooksBody,
  webhookWithSecretBody,
} from '../../wire/webhooks/webhooks.schemas';

const webhooksGuard = { auth: 'user', permission: 'system:manage_users' } as const;
const guarded = endpointsWith(webhooksGuard);
const aWebhook = endpointsWith({ ...webhooksGuard, params: webhookIdParams, invalid: idNotFound('Webhook') });
const one = { description: '{ webhook }', schema: webhookEnvelope };
const withSecret = { description: '{ webhook, secret } (Cache-Control: no-store)', schema: webhookWithSecretBody };

/**
 * CONTRACT §17 (docs/webhooks.md): webhook subscriptions, their deliveries, and redelivery. The signing secret
 * appears in the create and rotate answers only, which no cache keeps. The console's webhook pages are built from
 * these same endpoints (src/console/webhooks/webhooks.console.ts).
 */
export const webhooksApi = {
  list: guarded.get(
    '/webhooks',
    { summary: 'List webhook subscriptions', response: { description: '{ webhooks }', schema: webhooksBody } },
    async (_input, ctx) => ({ webhooks: (await webhooks.listWebhooks(ctx)).map(presentWebhook) }),
  ),
  create: guarded.post(
    '/webhooks',
    {
      summary: 'Subscribe a URL to audit events; the signing secret is returned once',
      noStore: true,
      body: createWebhookBody,
      response: { status: 201, ...withSecret },
    },
    async ({ body }, ctx) => {
      const { webhook, secret } = await webhooks.createWebhook(ctx, body);
      return { webhook: presentWebhook(webhook), secret };
    },
  ),
  get: aWebhook.get(
    '/webhooks/:webhookId',
    { summary: 'Webhook subscription detail (never the secret)', response: one },
    async ({ params }, ctx) => ({ webhook: presentWebhook(await webhooks.getWebhook(ctx, params.webhookId)) }),
  ),
  update: aWebhook.put(
    '/webhooks/:webhookId',
    { summary: 'Change a subscription (url, events, enabled, description)', body: updateWebhookBody, response: one },
    async ({ params, body }, ctx) => ({ webhook: presentWebhook(await webhooks.updateWebhook(ctx, params.webhookId, body)) }),
  ),
  remove: aWebhook.delete(
    '/webhooks/:webhookId',
    { summary: 'Delete a subscription and its deliveries', response: removed('Deleted') },
    async ({ params }, ctx) => webhooks.deleteWebhook(ctx, params.webhookId),
  ),
  rotateSecret: aWebhook.post(
    '/webhooks/:webhookId/rotate-secret',
    { summary: 'New signing secret, returned once (the previous one also signs for 24 hours)', noStore: true, response: withSecret },
    async ({ params }, ctx) => {
      const { webhook, secret } = await webhooks.rotateWebhookSecret(ctx, params.webhookId);
      return { webhook: presentWebhook(webhook), secret };
    },
  ),
  deliveries: aWebhook.get(
    '/webhooks/:webhookId/deliveries',
    {
      summary: 'Deliveries of a subscription, newest first (status, attempts, last answer, next attempt)',
      query: deliveriesQuery,
      noStore: true,
      response: { description: '{ deliveries, next_cursor }', schema: deliveriesBody },
    },
    async ({ params, query }, ctx) => {
      const page = await webhooks.listDeliveries(ctx, params.webhookId, query);
      return { deliveries: page.deliveries.map(presentDelivery), next_cursor: page.nextCursor };
    },
  ),
  redeliver: endpointsWith({ ...webhooksGuard, params: deliveryParams, invalid: idNotFound('Delivery') }).post(
    '/webhooks/:webhookId/deliveries/:deliveryId/redeliver',
    {
      summary: 'Attempt a delivery again now (same webhook-id)',
      response: { status: 202, description: '{ delivery } (pending; the attempt runs in the background)', schema: deliveryEnvelope },
    },
    async ({ params }, ctx) => ({ delivery: presentDelivery(await webhooks.redeliver(ctx, params.webhookId, params.deliveryId)) }),
  ),
};

export const createWebhooksRouter = servingRouter(webhooksApi, { tags: ['Webhooks'] });

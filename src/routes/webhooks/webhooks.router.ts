import type { z } from 'zod';
import { badRequest, notFound } from '../../errors';
import * as webhooks from '../../services/webhooks/subscriptions.service';
import { declareRouter, endpoint, serve } from '../route';
import type { RouteDeps } from '../types';
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
} from './webhooks.schemas';

const PERMISSION = 'system:manage_users';
const webhookNotFound = () => notFound('Webhook');
/** A malformed id is an unknown webhook (404); a bad query or body is the usual 400 with details. */
const invalidInput = (issues: z.core.$ZodIssue[], where: 'params' | 'query' | 'body') =>
  where === 'params'
    ? webhookNotFound()
    : badRequest(
        `${where === 'body' ? 'Body' : 'Query'} is invalid`,
        issues.map((i) => ({ path: i.path.join('.') || '(root)', message: i.message })),
      );

/**
 * CONTRACT §17 (docs/webhooks.md): webhook subscriptions, their deliveries, and redelivery. The signing secret
 * appears in the create and rotate answers only, which no cache keeps. The console's webhook pages are built from
 * these same endpoints (src/console/webhooks/webhooks.console.ts).
 */
export const webhooksApi = {
  list: endpoint(
    {
      method: 'get',
      path: '/webhooks',
      summary: 'List webhook subscriptions',
      auth: 'user',
      permission: PERMISSION,
      response: { description: '{ webhooks }', schema: webhooksBody },
    },
    async (_input, ctx) => ({ webhooks: (await webhooks.listWebhooks(ctx)).map(presentWebhook) }),
  ),
  create: endpoint(
    {
      method: 'post',
      path: '/webhooks',
      summary: 'Subscribe a URL to audit events; the signing secret is returned once',
      auth: 'user',
      permission: PERMISSION,
      noStore: true,
      body: createWebhookBody,
      response: { status: 201, description: '{ webhook, secret } (Cache-Control: no-store)', schema: webhookWithSecretBody },
    },
    async ({ body }, ctx) => {
      const { webhook, secret } = await webhooks.createWebhook(ctx, body);
      return { webhook: presentWebhook(webhook), secret };
    },
  ),
  get: endpoint(
    {
      method: 'get',
      path: '/webhooks/:webhookId',
      summary: 'Webhook subscription detail (never the secret)',
      auth: 'user',
      permission: PERMISSION,
      params: webhookIdParams,
      invalid: webhookNotFound,
      response: { description: '{ webhook }', schema: webhookEnvelope },
    },
    async ({ params }, ctx) => ({ webhook: presentWebhook(await webhooks.getWebhook(ctx, params.webhookId)) }),
  ),
  update: endpoint(
    {
      method: 'put',
      path: '/webhooks/:webhookId',
      summary: 'Change a subscription (url, events, enabled, description)',
      auth: 'user',
      permission: PERMISSION,
      params: webhookIdParams,
      body: updateWebhookBody,
      invalid: invalidInput,
      response: { description: '{ webhook }', schema: webhookEnvelope },
    },
    async ({ params, body }, ctx) => ({ webhook: presentWebhook(await webhooks.updateWebhook(ctx, params.webhookId, body)) }),
  ),
  remove: endpoint(
    {
      method: 'delete',
      path: '/webhooks/:webhookId',
      summary: 'Delete a subscription and its deliveries',
      auth: 'user',
      permission: PERMISSION,
      params: webhookIdParams,
      invalid: webhookNotFound,
      response: { status: 204, description: 'Deleted', kind: 'empty' },
    },
    async ({ params }, ctx) => {
      await webhooks.deleteWebhook(ctx, params.webhookId);
    },
  ),
  rotateSecret: endpoint(
    {
      method: 'post',
      path: '/webhooks/:webhookId/rotate-secret',
      summary: 'New signing secret, returned once (the previous one also signs for 24 hours)',
      auth: 'user',
      permission: PERMISSION,
      noStore: true,
      params: webhookIdParams,
      invalid: webhookNotFound,
      response: { description: '{ webhook, secret } (Cache-Control: no-store)', schema: webhookWithSecretBody },
    },
    async ({ params }, ctx) => {
      const { webhook, secret } = await webhooks.rotateWebhookSecret(ctx, params.webhookId);
      return { webhook: presentWebhook(webhook), secret };
    },
  ),
  deliveries: endpoint(
    {
      method: 'get',
      path: '/webhooks/:webhookId/deliveries',
      summary: 'Deliveries of a subscription, newest first (status, attempts, last answer, next attempt)',
      auth: 'user',
      permission: PERMISSION,
      params: webhookIdParams,
      query: deliveriesQuery,
      invalid: invalidInput,
      noStore: true,
      response: { description: '{ deliveries, next_cursor }', schema: deliveriesBody },
    },
    async ({ params, query }, ctx) => {
      const page = await webhooks.listDeliveries(ctx, params.webhookId, query);
      return { deliveries: page.deliveries.map(presentDelivery), next_cursor: page.nextCursor };
    },
  ),
  redeliver: endpoint(
    {
      method: 'post',
      path: '/webhooks/:webhookId/deliveries/:deliveryId/redeliver',
      summary: 'Attempt a delivery again now (same webhook-id)',
      auth: 'user',
      permission: PERMISSION,
      params: deliveryParams,
      invalid: () => notFound('Delivery'),
      response: { status: 202, description: '{ delivery } (pending; the attempt runs in the background)', schema: deliveryEnvelope },
    },
    async ({ params }, ctx) => ({ delivery: presentDelivery(await webhooks.redeliver(ctx, params.webhookId, params.deliveryId)) }),
  ),
};

export function createWebhooksRouter(deps: RouteDeps) {
  return declareRouter(deps, serve(deps, webhooksApi), { tags: ['Webhooks'] });
}

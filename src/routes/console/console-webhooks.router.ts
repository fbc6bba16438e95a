import type { Request, Response } from 'express';
import { z } from 'zod';
import type { WebhookSubscriptionRow } from '../../db/repositories/webhooks.repo';
import type { Principal } from '../../services/principal';
import { DELIVERABLE_EVENT_TYPES } from '../../services/webhooks/webhook-policy';
import * as webhooks from '../../services/webhooks/subscriptions.service';
import { renderConfirm } from '../../views/console/pages';
import * as views from '../../views/console/webhooks';
import { html, optionalText, text } from '../pages/page-kit';
import { declareRouter, route } from '../route';
import type { RouteDeps } from '../types';
import { pageEnv } from '../../views/env';
import { createWebhookBody, deliveriesQuery, deliveryParams, updateWebhookBody, webhookIdParams } from '../webhooks/webhooks.schemas';
import {
  act,
  checked,
  CONSOLE,
  confirmBody,
  fieldErrors,
  frameOf,
  refuseConsoleForm,
  refusalStatus,
  serviceFieldErrors,
  setFlash,
  submitForm,
} from './console-kit';
import type { FieldErrors } from '../../views/console/components';

const PERMISSION = 'system:manage_users';
const DELIVERIES_PAGE = 50;

const webhookForm = z.object({ url: text(2100), events: text(6000), description: text(600), enabled: text(10) });
type WebhookForm = z.output<typeof webhookForm>;
const deliveriesForm = z.object({ status: text(20), cursor: optionalText(60) });

/** The form as the API body, checked by the API's own schemas. */
const asWebhookBody = (f: WebhookForm) => ({
  url: f.url,
  events: f.events.split(/[\s,]+/).filter(Boolean),
  description: f.description,
  enabled: checked(f.enabled),
});

const valuesOf = (w?: WebhookSubscriptionRow): views.WebhookValues => ({
  url: w?.url ?? '',
  events: w?.events.join('\n') ?? '',
  description: w?.description ?? '',
  enabled: w?.enabled ?? true,
});

/**
 * Console pages of webhooks (CONTRACT §17, §14) over services/webhooks/subscriptions.service.ts, the service of
 * /api/admin/webhooks (permission system:manage_users, the same audit events). The signing secret appears only in the
 * answer to the create or rotate post: never in a URL, a cookie, a redirect target or a later page.
 */

/** The texts of these pages in the request's language (CONTRACT §15). */
const x = () => pageEnv().t.console.webhooks;

export function createConsoleWebhooksRouter(deps: RouteDeps) {
  const { ctx } = deps;
  const { config } = ctx;
  const post = { ...CONSOLE, method: 'post', csrf: refuseConsoleForm, form: true } as const;
  const page = (req: Request, res: Response, principal: Principal, title: string) =>
    frameOf(req, res, config, principal, 'webhooks', title);
  const form = (
    req: Request,
    res: Response,
    principal: Principal,
    status: number,
    data: { webhook?: WebhookSubscriptionRow; values: views.WebhookValues; errors: FieldErrors },
  ) =>
    html(
      res,
      status,
      views.renderWebhookForm(page(req, res, principal, data.webhook ? data.webhook.description || x().webhook : x().create), {
        ...data,
        eventTypes: DELIVERABLE_EVENT_TYPES,
      }),
    );
  const detail = (id: string) => `/admin/webhooks/${id}`;

  return declareRouter(
    deps,
    [
      route(
        {
          ...CONSOLE,
          method: 'get',
          path: '/webhooks',
          summary: 'Console: webhooks',
          permission: PERMISSION,
          twin: 'GET /api/admin/webhooks',
        },
        async ({ principal }, req, res) =>
          html(res, 200, views.renderWebhooks(page(req, res, principal, x().title), { webhooks: await webhooks.listWebhooks(ctx) })),
      ),
      route(
        {
          ...CONSOLE,
          method: 'get',
          path: '/webhooks/new',
          summary: 'Console: create a webhook (form)',
          permission: PERMISSION,
          twin: 'POST /api/admin/webhooks',
        },
        ({ principal }, req, res) => form(req, res, principal, 200, { values: valuesOf(), errors: {} }),
      ),
      route(
        {
          ...post,
          path: '/webhooks',
          summary: 'Console: create a webhook (the signing secret is shown once)',
          permission: PERMISSION,
          twin: 'POST /api/admin/webhooks',
          body: webhookForm,
        },
        async ({ body, principal }, req, res) => {
          const again = (errors: FieldErrors, status: number) =>
            form(req, res, principal, status, { values: { ...body, enabled: checked(body.enabled) }, errors });
          const created = await submitForm(createWebhookBody, asWebhookBody(body), again, 'url', (data) =>
            webhooks.createWebhook(ctx, data),
          );
          if (!created) return;
          html(
            res,
            201,
            views.renderWebhookSecret(page(req, res, principal, x().createdTitle), {
              heading: x().createdTitle,
              webhook: created.webhook,
              secret: created.secret,
              rotated: false,
            }),
          );
        },
      ),
      route(
        {
          ...CONSOLE,
          method: 'get',
          path: '/webhooks/:webhookId',
          summary: 'Console: a webhook',
          permission: PERMISSION,
          twin: 'GET /api/admin/webhooks/:webhookId',
          params: webhookIdParams,
        },
        async ({ params, principal }, req, res) => {
          const webhook = await webhooks.getWebhook(ctx, params.webhookId);
          form(req, res, principal, 200, { webhook, values: valuesOf(webhook), errors: {} });
        },
      ),
      route(
        {
          ...post,
          path: '/webhooks/:webhookId',
          summary: 'Console: edit a webhook',
          permission: PERMISSION,
          twin: 'PUT /api/admin/webhooks/:webhookId',
          params: webhookIdParams,
          body: webhookForm,
        },
        async ({ params, body, principal }, req, res) => {
          const webhook = await webhooks.getWebhook(ctx, params.webhookId);
          const again = (errors: FieldErrors, status: number) =>
            form(req, res, principal, status, { webhook, values: { ...body, enabled: checked(body.enabled) }, errors });
          const saved = await submitForm(updateWebhookBody, asWebhookBody(body), again, 'url', (data) =>
            webhooks.updateWebhook(ctx, params.webhookId, data),
          );
          if (!saved) return;
          setFlash(res, config, 'ok', x().saved);
          res.redirect(303, detail(params.webhookId));
        },
      ),
      route(
        {
          ...post,
          path: '/webhooks/:webhookId/rotate',
          summary: 'Console: rotate the signing secret of a webhook (shown once)',
          permission: PERMISSION,
          twin: 'POST /api/admin/webhooks/:webhookId/rotate-secret',
          params: webhookIdParams,
          body: confirmBody,
        },
        async ({ params, body, principal }, req, res) => {
          if (body.confirm !== 'yes') {
            const webhook = await webhooks.getWebhook(ctx, params.webhookId);
            return html(
              res,
              200,
              renderConfirm(page(req, res, principal, x().rotateTitle(webhook.url)), {
                message: x().rotateText,
                action: `${detail(webhook.id)}/rotate`,
                button: x().rotate,
                cancel: detail(webhook.id),
              }),
            );
          }
          let rotated;
          try {
            rotated = await webhooks.rotateWebhookSecret(ctx, params.webhookId);
          } catch (err) {
            // A webhook deleted in another tab: say so on the list (never a secret in a redirect).
            return act(config, res, '/admin/webhooks', () => Promise.reject(err));
          }
          html(
            res,
            200,
            views.renderWebhookSecret(page(req, res, principal, x().rotatedTitle), {
              heading: x().rotatedHeading,
              webhook: rotated.webhook,
              secret: rotated.secret,
              rotated: true,
            }),
          );
        },
      ),
      route(
        {
          ...post,
          path: '/webhooks/:webhookId/delete',
          summary: 'Console: delete a webhook',
          permission: PERMISSION,
          twin: 'DELETE /api/admin/webhooks/:webhookId',
          params: webhookIdParams,
          body: confirmBody,
        },
        async ({ params, body, principal }, req, res) => {
          if (body.confirm !== 'yes') {
            const webhook = await webhooks.getWebhook(ctx, params.webhookId);
            return html(
              res,
              200,
              renderConfirm(page(req, res, principal, x().deleteTitle(webhook.url)), {
                message: x().deleteText,
                action: `${detail(webhook.id)}/delete`,
                button: x().delete,
                cancel: detail(webhook.id),
              }),
            );
          }
          await act(config, res, '/admin/webhooks', async () => {
            await webhooks.deleteWebhook(ctx, params.webhookId);
            return x().deleted;
          });
        },
      ),
      route(
        {
          ...CONSOLE,
          method: 'get',
          path: '/webhooks/:webhookId/deliveries',
          summary: 'Console: deliveries of a webhook',
          permission: PERMISSION,
          twin: 'GET /api/admin/webhooks/:webhookId/deliveries',
          params: webhookIdParams,
          query: deliveriesForm,
        },
        async ({ params, query, principal }, req, res) => {
          const webhook = await webhooks.getWebhook(ctx, params.webhookId);
          const status = query.status === 'pending' || query.status === 'delivered' || query.status === 'failed' ? query.status : '';
          const f = page(req, res, principal, x().deliveries);
          const parsed = deliveriesQuery.safeParse({
            status: status || undefined,
            cursor: query.cursor || undefined,
            limit: DELIVERIES_PAGE,
          });
          const base = `/admin/webhooks/${webhook.id}/deliveries`;
          const link = (extra: Record<string, string>) => `${base}?${new URLSearchParams({ ...(status ? { status } : {}), ...extra })}`;
          if (!parsed.success) {
            return html(
              res,
              400,
              views.renderDeliveries(f, { webhook, deliveries: [], status, errors: fieldErrors(parsed.error.issues), first: link({}) }),
            );
          }
          let result;
          try {
            result = await webhooks.listDeliveries(ctx, params.webhookId, parsed.data);
          } catch (err) {
            const errors = serviceFieldErrors(err, 'cursor');
            if (errors === undefined) throw err;
            return html(res, refusalStatus(err), views.renderDeliveries(f, { webhook, deliveries: [], status, errors, first: link({}) }));
          }
          html(
            res,
            200,
            views.renderDeliveries(f, {
              webhook,
              deliveries: result.deliveries,
              status,
              errors: {},
              next: result.nextCursor ? link({ cursor: result.nextCursor }) : undefined,
              first: query.cursor ? link({}) : undefined,
            }),
          );
        },
      ),
      route(
        {
          ...post,
          path: '/webhooks/:webhookId/deliveries/:deliveryId/redeliver',
          summary: 'Console: redeliver a delivery now',
          permission: PERMISSION,
          twin: 'POST /api/admin/webhooks/:webhookId/deliveries/:deliveryId/redeliver',
          params: deliveryParams,
        },
        async ({ params }, _req, res) =>
          act(config, res, `/admin/webhooks/${params.webhookId}/deliveries`, async () => {
            const delivery = await webhooks.redeliver(ctx, params.webhookId, params.deliveryId);
            return x().requeued(delivery.eventType);
          }),
      ),
    ],
    { tags: ['Console'] },
  );
}

import type { Request, Response } from 'express';
import { z } from 'zod';
import type { ApiResourceRow } from '../../db/repositories/api-resources.repo';
import { hasPermission, type Principal } from '../../services/principal';
import * as resources from '../../services/oauth/resources.service';
import * as views from '../../views/console/resources';
import { renderConfirm } from '../../views/console/pages';
import { apiResourceIdParams, createApiResourceBody, updateApiResourceBody } from '../admin/admin.schemas';
import { html, text } from '../pages/page-kit';
import { declareRouter, route } from '../route';
import type { RouteDeps } from '../types';
import { pageEnv } from '../../views/env';
import { act, checked, CONSOLE, confirmBody, frameOf, refuseConsoleForm, setFlash, submitForm } from './console-kit';
import type { FieldErrors } from '../../views/console/components';

const resourceForm = z.object({
  identifier: text(2100),
  name: text(300),
  scopes: text(10_000),
  access_token_ttl_s: text(20),
  open_registration: text(10),
});
type ResourceForm = z.output<typeof resourceForm>;

/** The form as the API body (checked by the API's own schemas); a lifetime that is not a number stays a string, so the schema names it. */
function asResourceBody(f: ResourceForm) {
  const ttl = f.access_token_ttl_s.trim();
  return {
    identifier: f.identifier.trim(),
    name: f.name,
    scopes: f.scopes.split(/\s+/).filter(Boolean),
    access_token_ttl_s: ttl === '' ? undefined : /^-?\d+$/.test(ttl) ? Number(ttl) : ttl,
    open_registration: checked(f.open_registration),
  };
}

const valuesOf = (r?: ApiResourceRow): views.ResourceValues => ({
  identifier: r?.identifier ?? '',
  name: r?.name ?? '',
  scopes: r?.scopes.join(' ') ?? '',
  access_token_ttl_s: String(r?.accessTokenTtlSeconds ?? 3600),
  open_registration: r?.openRegistration ?? false,
});

const formValues = (f: ResourceForm): views.ResourceValues => ({ ...f, open_registration: checked(f.open_registration) });

/**
 * Console pages of API resources (CONTRACT §12, §14) over services/oauth/resources.service.ts, the service of
 * /api/admin/api-resources, with the same permissions (oauth_clients:read / oauth_clients:write) and audit events.
 */

/** The texts of these pages in the request's language (CONTRACT §15). */
const x = () => pageEnv().t.console.resources;

export function createConsoleResourcesRouter(deps: RouteDeps) {
  const { ctx } = deps;
  const { config } = ctx;
  const post = { ...CONSOLE, method: 'post', csrf: refuseConsoleForm, form: true } as const;
  const page = (req: Request, res: Response, principal: Principal, title: string) =>
    frameOf(req, res, config, principal, 'resources', title);
  const form = (
    req: Request,
    res: Response,
    principal: Principal,
    status: number,
    data: { resource?: ApiResourceRow; values: views.ResourceValues; errors: FieldErrors },
  ) =>
    html(
      res,
      status,
      views.renderResourceForm(page(req, res, principal, data.resource?.name ?? x().register), {
        ...data,
        canWrite: hasPermission(principal, 'oauth_clients:write'),
      }),
    );
  const detail = (id: string) => `/admin/api-resources/${id}`;

  return declareRouter(
    deps,
    [
      route(
        {
          ...CONSOLE,
          method: 'get',
          path: '/api-resources',
          summary: 'Console: API resources',
          permission: 'oauth_clients:read',
          twin: 'GET /api/admin/api-resources',
        },
        async ({ principal }, req, res) =>
          html(
            res,
            200,
            views.renderResources(page(req, res, principal, x().title), {
              resources: await resources.listResources(ctx),
              canWrite: hasPermission(principal, 'oauth_clients:write'),
            }),
          ),
      ),
      route(
        {
          ...CONSOLE,
          method: 'get',
          path: '/api-resources/new',
          summary: 'Console: register an API resource (form)',
          permission: 'oauth_clients:write',
          twin: 'POST /api/admin/api-resources',
        },
        ({ principal }, req, res) => form(req, res, principal, 200, { values: valuesOf(), errors: {} }),
      ),
      route(
        {
          ...post,
          path: '/api-resources',
          summary: 'Console: register an API resource',
          permission: 'oauth_clients:write',
          twin: 'POST /api/admin/api-resources',
          body: resourceForm,
        },
        async ({ body, principal }, req, res) => {
          const again = (errors: FieldErrors, status: number) => form(req, res, principal, status, { values: formValues(body), errors });
          const created = await submitForm(createApiResourceBody, asResourceBody(body), again, 'identifier', (data) =>
            resources.createApiResource(ctx, data),
          );
          if (!created) return;
          setFlash(res, config, 'ok', x().registered(created.name));
          res.redirect(303, detail(created.id));
        },
      ),
      route(
        {
          ...CONSOLE,
          method: 'get',
          path: '/api-resources/:resourceId',
          summary: 'Console: an API resource',
          permission: 'oauth_clients:read',
          twin: 'GET /api/admin/api-resources/:resourceId',
          params: apiResourceIdParams,
        },
        async ({ params, principal }, req, res) => {
          const resource = await resources.getApiResource(ctx, params.resourceId);
          form(req, res, principal, 200, { resource, values: valuesOf(resource), errors: {} });
        },
      ),
      route(
        {
          ...post,
          path: '/api-resources/:resourceId',
          summary: 'Console: edit an API resource',
          permission: 'oauth_clients:write',
          twin: 'PUT /api/admin/api-resources/:resourceId',
          params: apiResourceIdParams,
          body: resourceForm,
        },
        async ({ params, body, principal }, req, res) => {
          const resource = await resources.getApiResource(ctx, params.resourceId);
          const again = (errors: FieldErrors, status: number) =>
            form(req, res, principal, status, { resource, values: formValues(body), errors });
          const saved = await submitForm(updateApiResourceBody, asResourceBody(body), again, 'identifier', (data) =>
            resources.changeApiResource(ctx, params.resourceId, data),
          );
          if (!saved) return;
          setFlash(res, config, 'ok', x().saved);
          res.redirect(303, detail(params.resourceId));
        },
      ),
      route(
        {
          ...post,
          path: '/api-resources/:resourceId/delete',
          summary: 'Console: delete an API resource',
          permission: 'oauth_clients:write',
          twin: 'DELETE /api/admin/api-resources/:resourceId',
          params: apiResourceIdParams,
          body: confirmBody,
        },
        async ({ params, body, principal }, req, res) => {
          if (body.confirm !== 'yes') {
            const resource = await resources.getApiResource(ctx, params.resourceId);
            return html(
              res,
              200,
              renderConfirm(page(req, res, principal, x().deleteTitle(resource.name)), {
                message: x().deleteText(resource.identifier),
                action: `${detail(resource.id)}/delete`,
                button: x().delete,
                cancel: detail(resource.id),
              }),
            );
          }
          await act(config, res, '/admin/api-resources', async () => {
            const removed = await resources.removeApiResource(ctx, params.resourceId);
            return x().deleted(removed.name);
          });
        },
      ),
    ],
    { tags: ['Console'] },
  );
}

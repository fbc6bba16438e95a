import { z } from 'zod';
import { redirect } from '../../http/outcome';
import { resourcesApi as api } from '../../routes/admin/admin.router';
import type { ApiResource } from '../../routes/admin/admin.schemas';
import { checked } from '../../routes/console/console-kit';
import { text } from '../../routes/pages/page-kit';
import { declareRouter } from '../../routes/route';
import type { RouteDeps } from '../../routes/types';
import { hasPermission, type Principal } from '../../services/principal';
import type { FieldErrors } from '../../views/console/components';
import * as views from '../../views/console/resources';
import { pageEnv } from '../../views/env';
import { consoleAction, consoleForm, consolePage, consoleSection } from '../action';

/**
 * Console pages of API resources (CONTRACT §12, §14), each built from its /api/admin/api-resources endpoint (same guard,
 * schemas, service call and audit events).
 */
const resourceForm = z.object({
  identifier: text(2100),
  name: text(300),
  scopes: text(10_000),
  access_token_ttl_s: text(20),
  open_registration: text(10).transform(checked),
  dpop_bound_access_tokens: text(10).transform(checked),
  role_based_access: text(10).transform(checked),
});
type ResourceForm = z.output<typeof resourceForm>;

/** The form as the API body; a lifetime that is not a number stays a string, so that the API's schema names it. */
function asBody(f: ResourceForm) {
  const ttl = f.access_token_ttl_s.trim();
  return {
    identifier: f.identifier.trim(),
    name: f.name,
    scopes: f.scopes.split(/\s+/).filter(Boolean),
    access_token_ttl_s: ttl === '' ? undefined : /^-?\d+$/.test(ttl) ? Number(ttl) : ttl,
    open_registration: f.open_registration,
    dpop_bound_access_tokens: f.dpop_bound_access_tokens,
    role_based_access: f.role_based_access,
  };
}

const valuesOf = (r?: ApiResource): views.ResourceValues => ({
  identifier: r?.identifier ?? '',
  name: r?.name ?? '',
  scopes: r?.scopes.join(' ') ?? '',
  access_token_ttl_s: String(r?.access_token_ttl_s ?? 3600),
  open_registration: r?.open_registration ?? false,
  dpop_bound_access_tokens: r?.dpop_bound_access_tokens ?? false,
  role_based_access: r?.role_based_access ?? false,
});

const x = () => pageEnv().t.console.resources;
const detail = (id: string) => `/admin/api-resources/${id}`;
const canWrite = (p: Principal) => hasPermission(p, 'oauth_clients:write');
const form = (principal: Principal, data: { resource?: ApiResource; values?: views.ResourceValues; errors?: FieldErrors }) =>
  consolePage(
    views.renderResourceForm,
    { ...data, values: data.values ?? valuesOf(data.resource), errors: data.errors ?? {}, canWrite: canWrite(principal) },
    data.resource?.name ?? x().register,
  );

export function createConsoleResourcesRouter(deps: RouteDeps) {
  const routes = consoleSection('resources', deps.ctx, [
    consoleAction(api.list, {
      path: '/api-resources',
      done: (r, { principal }) => consolePage(views.renderResources, { ...r, canWrite: canWrite(principal) }, x().title),
    }),
    consoleForm(api.create, { path: '/api-resources/new', page: ({ principal }) => form(principal, {}) }),
    consoleAction(api.create, {
      path: '/api-resources',
      form: resourceForm,
      input: asBody,
      field: 'identifier',
      invalid: ({ values, errors }, { principal }) => form(principal, { values, errors }),
      done: (r) => redirect(detail(r.resource.id), x().registered(r.resource.name)),
    }),
    consoleAction(api.get, { path: '/api-resources/:resourceId', done: (r, { principal }) => form(principal, r) }),
    consoleAction(api.update, {
      path: '/api-resources/:resourceId',
      form: resourceForm,
      input: asBody,
      field: 'identifier',
      invalid: async ({ values, errors }, { call, params, principal }) =>
        form(principal, { resource: (await call(api.get, { params })).resource, values, errors }),
      done: (_r, { params }) => redirect(detail(params.resourceId), x().saved),
    }),
    consoleAction(api.remove, {
      path: '/api-resources/:resourceId/delete',
      confirm: async ({ call, params }) => {
        const { resource } = await call(api.get, { params });
        return { title: x().deleteTitle(resource.name), text: x().deleteText(resource.identifier), button: x().delete };
      },
      back: () => '/admin/api-resources',
      done: (r) => redirect('/admin/api-resources', x().deleted(r.resource.name)),
    }),
  ]);
  return declareRouter(deps, routes, { tags: ['Console'] });
}

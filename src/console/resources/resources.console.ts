import { resourcesApi as api } from '../../routes/admin/admin.router';
import type { ApiResource } from '../../wire/admin/admin.schemas';
import * as views from '../../views/console/resources';
import { consoleAction, consoleListing, consolePage, consoleRouter, pageEnv, redirect, type Caller, type FieldErrors } from '../action';
import { resourceBody, valuesOf } from './resources.form';

/** Console pages of API resources (CONTRACT §12, §14), each built from its /api/admin/api-resources endpoint. */
const x = () => pageEnv().t.console.resources;
const detail = (id: string) => `/admin/api-resources/${id}`;
const form = ({ allows }: Caller, data: { resource?: ApiResource; values?: views.ResourceValues; errors?: FieldErrors }) =>
  consolePage(
    views.renderResourceForm,
    { ...data, values: data.values ?? valuesOf(data.resource), errors: data.errors ?? {}, canWrite: allows(api.update) },
    data.resource?.name ?? x().register,
  );

export const createConsoleResourcesRouter = consoleRouter('resources', () => [
  ...consoleListing(api, '/api-resources', {
    list: (r, { allows }) => consolePage(views.renderResources, { ...r, canWrite: allows(api.create) }, x().title),
    form: (a) => form(a, {}),
    create: {
      ...resourceBody,
      invalid: ({ values, errors }, a) => form(a, { values, errors }),
      done: (r) => redirect(detail(r.resource.id), x().registered(r.resource.name)),
    },
  }),
  consoleAction(api.get, { path: '/api-resources/:resourceId', done: (r, a) => form(a, r) }),
  consoleAction(api.update, {
    path: '/api-resources/:resourceId',
    ...resourceBody,
    invalid: async ({ values, errors }, a) => {
      const { resource } = await a.call(api.get, { params: a.params });
      return a.inRequest(() => form(a, { resource, values, errors }));
    },
    done: (_r, { params }) => redirect(detail(params.resourceId), x().saved),
  }),
  consoleAction(api.remove, {
    path: '/api-resources/:resourceId/delete',
    confirm: async ({ call, params }) => {
      const says = x();
      const { resource } = await call(api.get, { params });
      return { title: says.deleteTitle(resource.name), text: says.deleteText(resource.identifier), button: says.delete };
    },
    back: () => '/admin/api-resources',
    done: (r) => redirect('/admin/api-resources', x().deleted(r.resource.name)),
  }),
]);

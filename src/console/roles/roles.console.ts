import { clientsApi, resourcesApi } from '../../routes/admin/admin.router';
import type { Role } from '../../wire/rbac/rbac.schemas';
import { rolesApi as api } from '../../routes/rbac/roles.routes';
import * as views from '../../views/console/pages';
import {
  asking,
  consoleAction,
  consoleListing,
  consolePage,
  consoleRouter,
  pageEnv,
  redirect,
  saying,
  type Caller,
  type FieldErrors,
} from '../action';
import { changesOf, createBody, roleForm, valuesOf } from './roles.form';

/**
 * Console pages of roles (CONTRACT §6, §14), each built from its /api/rbac/roles endpoint: anyone of the admin tier
 * reads them, only super_admin changes them (the API's guards).
 */
const x = () => pageEnv().t.console.roles;
const detail = (id: string) => `/admin/roles/${id}`;
const roleOf = async ({ call }: Caller, roleId: string): Promise<Role> => (await call(api.get, { params: { roleId } })).role;

const form = async (a: Caller, data: { role?: Role; values?: views.RoleValues; errors?: FieldErrors }) => {
  const title = data.role ? x().heading(data.role.name) : x().create;
  const editing = data.role ? a.allows(api.update) : true;
  // The lists a super_admin chooses from (only the editor needs them; an admin reading a role may lack oauth_clients:read).
  const [clients, resources] = editing
    ? await Promise.all([a.call(clientsApi.list, { query: {} }), a.call(resourcesApi.list, {})])
    : [{ clients: [] }, { resources: [] }];
  return consolePage(
    views.renderRoleForm,
    {
      ...data,
      permissions: (await a.call(api.permissions, {})).permissions,
      applications: clients.clients,
      resources: resources.resources,
      values: data.values ?? valuesOf(data.role),
      errors: data.errors ?? {},
      canEdit: editing,
    },
    title,
  );
};

export const createConsoleRolesRouter = consoleRouter('roles', () => [
  ...consoleListing(api, '/roles', {
    list: (r, { allows }) => consolePage(views.renderRoles, { ...r, canEdit: allows(api.update) }, x().title),
    form: (a) => form(a, {}),
    create: {
      ...createBody,
      invalid: ({ values, errors }, a) => form(a, { values, errors }),
      done: ({ role }) => redirect(detail(role.id), x().created(role.name)),
    },
  }),
  consoleAction(api.get, { path: '/roles/:roleId', done: ({ role }, a) => form(a, { role }) }),
  consoleAction(api.update, {
    path: '/roles/:roleId',
    form: roleForm,
    input: async (f, a) => changesOf(f, await roleOf(a, a.params.roleId)),
    field: 'name',
    invalid: async ({ values, errors }, a) => {
      const role = await roleOf(a, a.params.roleId);
      return a.inRequest(() => form(a, { role, values, errors }));
    },
    done: (_r, { params }) => redirect(detail(params.roleId), x().saved),
  }),
  consoleAction(api.deactivate, {
    path: '/roles/:roleId/deactivate',
    confirm: asking(api.get, (r) => r.role.name, saying('deactivate', x)),
    back: (p) => detail(p.roleId),
    done: (_r, { params }) => redirect(detail(params.roleId), x().deactivated),
  }),
]);

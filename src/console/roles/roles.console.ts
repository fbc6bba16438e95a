import { z } from 'zod';
import { redirect } from '../../http/outcome';
import { list } from '../../routes/console/console-kit';
import { text } from '../../routes/pages/page-kit';
import { clientsApi, resourcesApi } from '../../routes/admin/admin.router';
import type { Role } from '../../routes/rbac/rbac.schemas';
import { rolesApi as api } from '../../routes/rbac/roles.routes';
import { declareRouter } from '../../routes/route';
import type { RouteDeps } from '../../routes/types';
import type { Principal } from '../../services/principal';
import { SUPER_ADMIN } from '../../services/rbac-policy';
import type { FieldErrors } from '../../views/console/components';
import * as views from '../../views/console/pages';
import { pageEnv } from '../../views/env';
import { consoleAction, consoleForm, consolePage, consoleSection, type ActionInput } from '../action';

/**
 * Console pages of roles (CONTRACT §6, §14), each built from its /api/rbac/roles endpoint: anyone of the admin tier
 * reads them, only super_admin changes them (the API's guards).
 */
const roleForm = z.object({
  name: text(200),
  description: text(600),
  application: text(200),
  permissions: list(),
  api_scopes: list(),
});
type RoleValues = views.RoleValues;

/** A checkbox's value `<resource identifier> <scope>` (an identifier is a URI and a scope a token: no spaces) as the API's entry. */
const apiScopesOf = (values: readonly string[]) =>
  values.map((v) => {
    const at = v.lastIndexOf(' ');
    return { resource: v.slice(0, at), scope: v.slice(at + 1) };
  });
const valuesOfRole = (r: Role): RoleValues => ({
  name: r.name,
  description: r.description,
  application: r.application ?? '',
  permissions: r.permissions,
  api_scopes: r.api_scopes.map((a) => `${a.resource} ${a.scope}`),
});

const x = () => pageEnv().t.console.roles;
const detail = (id: string) => `/admin/roles/${id}`;
const canEdit = (p: Principal) => p.roleNames.includes(SUPER_ADMIN);
type Input = Pick<ActionInput<never, never>, 'principal' | 'call'>;

const roleOf = async ({ call }: Input, roleId: string): Promise<Role> => (await call(api.get, { params: { roleId } })).role;

const form = async (a: Input, data: { role?: Role; values?: RoleValues; errors?: FieldErrors }) => {
  const editing = data.role ? canEdit(a.principal) : true;
  // The lists a super_admin chooses from (only the editor needs them; an admin reading a role may lack oauth_clients:read).
  const [clients, resources] = editing
    ? await Promise.all([a.call(clientsApi.list, { query: {} }), a.call(resourcesApi.list, {})])
    : [{ clients: [] }, { resources: [] }];
  return consolePage(
    views.renderRoleForm,
    {
      ...data,
      permissions: (await a.call(api.permissions, {})).permissions,
      applications: clients.clients.map((c) => ({ clientId: c.client_id, name: c.name })),
      resources: resources.resources.map((r) => ({
        identifier: r.identifier,
        name: r.name,
        scopes: r.scopes,
        roleBasedAccess: r.role_based_access,
      })),
      values:
        data.values ??
        (data.role ? valuesOfRole(data.role) : { name: '', description: '', application: '', permissions: [], api_scopes: [] }),
      errors: data.errors ?? {},
      canEdit: editing,
    },
    data.role ? x().heading(data.role.name) : x().create,
  );
};

export function createConsoleRolesRouter(deps: RouteDeps) {
  const routes = consoleSection('roles', deps.ctx, [
    consoleAction(api.list, {
      path: '/roles',
      done: (r, { principal }) => consolePage(views.renderRoles, { ...r, canEdit: canEdit(principal) }, x().title),
    }),
    consoleForm(api.create, { path: '/roles/new', page: (a) => form(a, {}) }),
    consoleAction(api.create, {
      path: '/roles',
      form: roleForm,
      input: (f) => ({ ...f, application: f.application.trim() || undefined, api_scopes: apiScopesOf(f.api_scopes) }),
      field: 'name',
      invalid: ({ values, errors }, a) => form(a, { values, errors }),
      done: ({ role }) => redirect(detail(role.id), x().created(role.name)),
    }),
    consoleAction(api.get, { path: '/roles/:roleId', done: ({ role }, a) => form(a, { role }) }),
    consoleAction(api.update, {
      path: '/roles/:roleId',
      form: roleForm,
      // Only a changed name or application is sent (built-in roles keep their names; a global role has no application field).
      input: async ({ name, description, application, permissions, api_scopes }, a) => {
        const role = await roleOf(a, a.params.roleId);
        return {
          ...(name === role.name ? {} : { name }),
          ...(role.application !== null && application.trim() !== role.application ? { application: application.trim() } : {}),
          description,
          ...(role.name === SUPER_ADMIN && role.application === null ? {} : { permissions }),
          api_scopes: apiScopesOf(api_scopes),
        };
      },
      field: 'name',
      invalid: async ({ values, errors }, a) => form(a, { role: await roleOf(a, a.params.roleId), values, errors }),
      done: (_r, { params }) => redirect(detail(params.roleId), x().saved),
    }),
    consoleAction(api.deactivate, {
      path: '/roles/:roleId/deactivate',
      confirm: async (a) => ({
        title: x().deactivateTitle((await roleOf(a, a.params.roleId)).name),
        text: x().deactivateText,
        button: x().deactivate,
      }),
      back: (p) => detail(p.roleId),
      done: (_r, { params }) => redirect(detail(params.roleId), x().deactivated),
    }),
  ]);
  return declareRouter(deps, routes, { tags: ['Console'] });
}

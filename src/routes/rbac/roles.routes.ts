import { SUPER_ADMIN } from '../../services/rbac-policy';
import * as assignments from '../../services/role-assignment.service';
import * as catalogue from '../../services/role-catalogue.service';
import { endpointsWith, removed, reply, route, type DeclaredRoute, type Endpoint } from '../route';
import { presentAdminUser } from '../users/users.presenters';
import { adminUsersBody } from '../../wire/users/users.schemas';
import { presentHeldRole, presentPermission, presentRole } from './rbac.presenters';
import {
  assignRoleBody,
  createRoleBody,
  heldRolesBody,
  permissionsBody,
  roleEnvelope,
  roleIdParams,
  rolesBody,
  updateRoleBody,
  userIdParams,
  userRoleParams,
} from '../../wire/rbac/rbac.schemas';

const SUPER = { auth: 'user', role: SUPER_ADMIN } as const;
const MANAGE_ROLES = { auth: 'user', permission: 'users:manage_roles' } as const;
const forAdmins = endpointsWith({ auth: 'user', admin: true });
const aRole = endpointsWith({ ...SUPER, params: roleIdParams });
const one = { description: '{ role }', schema: roleEnvelope };

/**
 * The roles, their assignment and the admin list (spec §4.4, §4.5): one declaration each (guard, schemas, handler).
 * Some are served under both URL sets, /api/users/* and /api/rbac/* (`createRoleRoutes` says where); the console's
 * role pages and a user's role actions are built from the same endpoints (src/console/roles/roles.console.ts).
 */
export const rolesApi = {
  permissions: forAdmins.get(
    '/permissions',
    { summary: 'Permission catalogue', response: { description: '{ permissions: [{ name, description }] }', schema: permissionsBody } },
    async (_input, ctx) => ({ permissions: (await catalogue.listPermissionCatalogue(ctx)).map(presentPermission) }),
  ),
  list: forAdmins.get(
    '/roles',
    { summary: 'Roles, including application-scoped ones', response: { description: '{ roles }', schema: rolesBody } },
    async (_input, ctx) => ({ roles: (await catalogue.listRoles(ctx)).map(presentRole) }),
  ),
  assignable: endpointsWith(MANAGE_ROLES).get(
    '/roles/assignable',
    {
      summary: 'The roles the caller may hand out, active or not: the choices of whoever assigns roles or maps SCIM groups to them',
      description:
        'For holders of users:manage_roles, who need not be admins: what the caller may give a user (POST ' +
        '/api/users/:userId/roles) or map a SCIM group to (PUT /api/admin/scim-groups/:groupId/roles), by the rule every ' +
        'grant follows: no permission and no API scope the caller does not hold (admin and super_admin hand out any API ' +
        'scope), super_admin only to a super_admin. Each role carries is_active; a deactivated one is refused (409) when ' +
        'granted (docs/rbac.md).',
      noStore: true,
      response: { description: '{ roles }', schema: rolesBody },
    },
    async ({ principal }, ctx) => ({ roles: (await assignments.listAssignableRoles(ctx, principal)).map(presentRole) }),
  ),
  get: endpointsWith({ auth: 'user', admin: true, params: roleIdParams }).get(
    '/roles/:roleId',
    { summary: 'A role (active or not)', response: one },
    async ({ params }, ctx) => ({ role: presentRole(await catalogue.roleOr404(ctx.db, params.roleId)) }),
  ),
  create: endpointsWith(SUPER).post(
    '/roles',
    { summary: 'Create a role', body: createRoleBody, response: { status: 201, ...one }, errors: [409] },
    async ({ body }, ctx) => ({ role: presentRole(await catalogue.createRole(ctx, body)) }),
  ),
  update: aRole.put(
    '/roles/:roleId',
    { summary: 'Update a role', body: updateRoleBody, response: one, errors: [409] },
    async ({ params, body }, ctx) => ({ role: presentRole(await catalogue.updateRole(ctx, params.roleId, body)) }),
  ),
  deactivate: aRole.delete(
    '/roles/:roleId',
    { summary: 'Deactivate a role', response: { description: '{ role } (is_active false)', schema: roleEnvelope }, errors: [409] },
    async ({ params }, ctx) => ({ role: presentRole(await catalogue.deactivateRole(ctx, params.roleId)) }),
  ),
  listOfUser: endpointsWith({ auth: 'user', permission: 'users:read', params: userIdParams }).get(
    '/:userId/roles',
    {
      summary: "A user's roles: assigned, and granted by SCIM groups (each marked with how it is held)",
      response: { description: '{ roles } (Role objects with `assigned` and `scim_groups`)', schema: heldRolesBody },
    },
    async ({ params }, ctx) => ({ roles: (await assignments.listUserRoles(ctx, params.userId)).map(presentHeldRole) }),
  ),
  assignToUser: endpointsWith({ ...MANAGE_ROLES, params: userIdParams }).post(
    '/:userId/roles',
    {
      summary: 'Assign a role ({ role_id } or { role, application? })',
      body: assignRoleBody,
      response: { status: 201, description: '{ roles } (200 when already held)', schema: rolesBody },
      errors: [409],
    },
    async ({ principal, params, body }, ctx) => {
      const result = await assignments.assignUserRole(ctx, principal, params.userId, body);
      return reply(result.assigned ? 201 : 200, { roles: result.roles.map(presentRole) });
    },
  ),
  removeFromUser: endpointsWith({ ...MANAGE_ROLES, params: userRoleParams }).delete(
    '/:userId/roles/:roleId',
    { summary: 'Remove a role', response: removed('Removed'), errors: [409] },
    async ({ principal, params }, ctx) => {
      await assignments.removeUserRole(ctx, principal, params.userId, params.roleId);
    },
  ),
  adminUsers: endpointsWith({ auth: 'user', permission: 'system:manage_users' }).get(
    '/admin-users',
    { summary: 'Users holding admin-tier roles', response: { description: '{ users } (each with adminRole)', schema: adminUsersBody } },
    async (_input, ctx) => ({ users: (await assignments.listAdminUsers(ctx)).map(presentAdminUser) }),
  ),
};

/**
 * The role routes served under both URL sets: the changes to the catalogue (at their own paths), a user's roles below
 * `userPrefix` (`''` in /api/users, `'/users'` in /api/rbac), and the admin list at the path the router gives it.
 */
export function createRoleRoutes() {
  const at = (e: Endpoint, path = e.decl.path): DeclaredRoute => route({ ...e.decl, path }, (input) => e.run(input, input.ctx));
  return {
    catalogueChanges: [rolesApi.create, rolesApi.update, rolesApi.deactivate].map((e) => at(e)),
    ofUser: (userPrefix: string) =>
      [rolesApi.listOfUser, rolesApi.assignToUser, rolesApi.removeFromUser].map((e) => at(e, userPrefix + e.decl.path)),
    adminUsers: (path: string) => at(rolesApi.adminUsers, path),
  };
}

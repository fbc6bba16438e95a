import type { ServiceContext } from '../../services/context';
import { SUPER_ADMIN } from '../../services/rbac-policy';
import * as assignments from '../../services/role-assignment.service';
import * as catalogue from '../../services/role-catalogue.service';
import { endpoint, reply, route, type DeclaredRoute, type Endpoint } from '../route';
import { presentAdminUser } from '../users/users.presenters';
import { adminUsersBody } from '../users/users.schemas';
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
} from './rbac.schemas';

/**
 * The roles, their assignment and the admin list (spec §4.4, §4.5): one declaration each (guard, schemas, handler).
 * Some are served under both URL sets, /api/users/* and /api/rbac/* (`createRoleRoutes` says where); the console's
 * role pages and a user's role actions are built from the same endpoints (src/console/roles/roles.console.ts).
 */
export const rolesApi = {
  permissions: endpoint(
    {
      method: 'get',
      path: '/permissions',
      summary: 'Permission catalogue',
      auth: 'user',
      admin: true,
      response: { description: '{ permissions: [{ name, description }] }', schema: permissionsBody },
    },
    async (_input, ctx) => ({ permissions: (await catalogue.listPermissionCatalogue(ctx)).map(presentPermission) }),
  ),
  list: endpoint(
    {
      method: 'get',
      path: '/roles',
      summary: 'Roles, including application-scoped ones',
      auth: 'user',
      admin: true,
      response: { description: '{ roles }', schema: rolesBody },
    },
    async (_input, ctx) => ({ roles: (await catalogue.listRoles(ctx)).map(presentRole) }),
  ),
  assignable: endpoint(
    {
      method: 'get',
      path: '/roles/assignable',
      summary: 'The roles the caller may hand out, active or not: the choices of whoever assigns roles or maps SCIM groups to them',
      description:
        'For holders of users:manage_roles, who need not be admins: what the caller may give a user (POST ' +
        '/api/users/:userId/roles) or map a SCIM group to (PUT /api/admin/scim-groups/:groupId/roles), by the rule every ' +
        'grant follows: no permission and no API scope the caller does not hold (admin and super_admin hand out any API ' +
        'scope), super_admin only to a super_admin. Each role carries is_active; a deactivated one is refused (409) when ' +
        'granted (docs/rbac.md).',
      auth: 'user',
      permission: 'users:manage_roles',
      noStore: true,
      response: { description: '{ roles }', schema: rolesBody },
    },
    async ({ principal }, ctx) => ({ roles: (await assignments.listAssignableRoles(ctx, principal)).map(presentRole) }),
  ),
  get: endpoint(
    {
      method: 'get',
      path: '/roles/:roleId',
      summary: 'A role (active or not)',
      auth: 'user',
      admin: true,
      params: roleIdParams,
      response: { description: '{ role }', schema: roleEnvelope },
    },
    async ({ params }, ctx) => ({ role: presentRole(await catalogue.roleOr404(ctx.db, params.roleId)) }),
  ),
  create: endpoint(
    {
      method: 'post',
      path: '/roles',
      summary: 'Create a role',
      auth: 'user',
      role: SUPER_ADMIN,
      body: createRoleBody,
      response: { status: 201, description: '{ role }', schema: roleEnvelope },
      errors: [409],
    },
    async ({ body }, ctx) => ({ role: presentRole(await catalogue.createRole(ctx, body)) }),
  ),
  update: endpoint(
    {
      method: 'put',
      path: '/roles/:roleId',
      summary: 'Update a role',
      auth: 'user',
      role: SUPER_ADMIN,
      params: roleIdParams,
      body: updateRoleBody,
      response: { description: '{ role }', schema: roleEnvelope },
      errors: [409],
    },
    async ({ params, body }, ctx) => ({ role: presentRole(await catalogue.updateRole(ctx, params.roleId, body)) }),
  ),
  deactivate: endpoint(
    {
      method: 'delete',
      path: '/roles/:roleId',
      summary: 'Deactivate a role',
      auth: 'user',
      role: SUPER_ADMIN,
      params: roleIdParams,
      response: { description: '{ role } (is_active false)', schema: roleEnvelope },
      errors: [409],
    },
    async ({ params }, ctx) => ({ role: presentRole(await catalogue.deactivateRole(ctx, params.roleId)) }),
  ),
  listOfUser: endpoint(
    {
      method: 'get',
      path: '/:userId/roles',
      summary: "A user's roles: assigned, and granted by SCIM groups (each marked with how it is held)",
      auth: 'user',
      permission: 'users:read',
      params: userIdParams,
      response: { description: '{ roles } (Role objects with `assigned` and `scim_groups`)', schema: heldRolesBody },
    },
    async ({ params }, ctx) => ({ roles: (await assignments.listUserRoles(ctx, params.userId)).map(presentHeldRole) }),
  ),
  assignToUser: endpoint(
    {
      method: 'post',
      path: '/:userId/roles',
      summary: 'Assign a role ({ role_id } or { role, application? })',
      auth: 'user',
      permission: 'users:manage_roles',
      params: userIdParams,
      body: assignRoleBody,
      response: { status: 201, description: '{ roles } (200 when already held)', schema: rolesBody },
      errors: [409],
    },
    async ({ principal, params, body }, ctx) => {
      const result = await assignments.assignUserRole(ctx, principal, params.userId, body);
      return reply(result.assigned ? 201 : 200, { roles: result.roles.map(presentRole) });
    },
  ),
  removeFromUser: endpoint(
    {
      method: 'delete',
      path: '/:userId/roles/:roleId',
      summary: 'Remove a role',
      auth: 'user',
      permission: 'users:manage_roles',
      params: userRoleParams,
      response: { status: 204, description: 'Removed', kind: 'empty' },
      errors: [409],
    },
    async ({ principal, params }, ctx) => {
      await assignments.removeUserRole(ctx, principal, params.userId, params.roleId);
    },
  ),
  adminUsers: endpoint(
    {
      method: 'get',
      path: '/admin-users',
      summary: 'Users holding admin-tier roles',
      auth: 'user',
      permission: 'system:manage_users',
      response: { description: '{ users } (each with adminRole)', schema: adminUsersBody },
    },
    async (_input, ctx) => ({ users: (await assignments.listAdminUsers(ctx)).map(presentAdminUser) }),
  ),
};

/** The role routes of a router, each at the path the router gives it. */
export function createRoleRoutes(ctx: ServiceContext) {
  const at =
    (e: Endpoint) =>
    (path: string): DeclaredRoute =>
      route({ ...e.decl, path }, (input) => e.run(input, ctx));
  return {
    create: at(rolesApi.create),
    update: at(rolesApi.update),
    deactivate: at(rolesApi.deactivate),
    listOfUser: at(rolesApi.listOfUser),
    assignToUser: at(rolesApi.assignToUser),
    removeFromUser: at(rolesApi.removeFromUser),
    adminUsers: at(rolesApi.adminUsers),
  };
}

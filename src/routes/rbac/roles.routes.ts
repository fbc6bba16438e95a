import type { ServiceContext } from '../../services/context';
import { SUPER_ADMIN } from '../../services/rbac-policy';
import * as assignments from '../../services/role-assignment.service';
import * as catalogue from '../../services/role-catalogue.service';
import { reply, route, type DeclaredRoute } from '../route';
import { presentAdminUser } from '../users/users.presenters';
import { adminUsersBody } from '../users/users.schemas';
import { presentHeldRole, presentRole } from './rbac.presenters';
import {
  assignRoleBody,
  createRoleBody,
  heldRolesBody,
  roleEnvelope,
  roleIdParams,
  rolesBody,
  updateRoleBody,
  userIdParams,
  userRoleParams,
} from './rbac.schemas';

/**
 * The role, role-assignment and admin-list routes served under both URL sets, /api/users/* (spec §4.4) and
 * /api/rbac/* (§4.5): one declaration each (guard, schemas, handler); a router only says where it mounts them.
 */
export function createRoleRoutes(ctx: ServiceContext) {
  const at =
    (declared: DeclaredRoute) =>
    (path: string): DeclaredRoute => ({ ...declared, decl: { ...declared.decl, path } });
  return {
    create: at(
      route(
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
        async ({ body }) => ({ role: presentRole(await catalogue.createRole(ctx, body)) }),
      ),
    ),
    update: at(
      route(
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
        async ({ params, body }) => ({ role: presentRole(await catalogue.updateRole(ctx, params.roleId, body)) }),
      ),
    ),
    deactivate: at(
      route(
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
        async ({ params }) => ({ role: presentRole(await catalogue.deactivateRole(ctx, params.roleId)) }),
      ),
    ),
    listOfUser: at(
      route(
        {
          method: 'get',
          path: '/:userId/roles',
          summary: "A user's roles: assigned, and granted by SCIM groups (each marked with how it is held)",
          auth: 'user',
          permission: 'users:read',
          params: userIdParams,
          response: { description: '{ roles } (Role objects with `assigned` and `scim_groups`)', schema: heldRolesBody },
        },
        async ({ params }) => ({ roles: (await assignments.listUserRoles(ctx, params.userId)).map(presentHeldRole) }),
      ),
    ),
    assignToUser: at(
      route(
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
        async ({ principal, params, body }) => {
          const result = await assignments.assignUserRole(ctx, principal, params.userId, body);
          return reply(result.assigned ? 201 : 200, { roles: result.roles.map(presentRole) });
        },
      ),
    ),
    removeFromUser: at(
      route(
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
        async ({ principal, params }) => {
          await assignments.removeUserRole(ctx, principal, params.userId, params.roleId);
        },
      ),
    ),
    adminUsers: at(
      route(
        {
          method: 'get',
          path: '/admin-users',
          summary: 'Users holding admin-tier roles',
          auth: 'user',
          permission: 'system:manage_users',
          response: { description: '{ users } (each with adminRole)', schema: adminUsersBody },
        },
        async () => ({ users: (await assignments.listAdminUsers(ctx)).map(presentAdminUser) }),
      ),
    ),
  };
}

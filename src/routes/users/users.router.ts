import { resetUserFactors } from '../../services/mfa/factor-reset.service';
import * as users from '../../services/users.service';
import { listRoles } from '../../services/role-catalogue.service';
import { presentRole } from '../rbac/rbac.presenters';
import { rolesBody, userIdParams } from '../rbac/rbac.schemas';
import { createRoleRoutes } from '../rbac/roles.routes';
import { declareRouter, route } from '../route';
import type { RouteDeps } from '../types';
import { presentUserDetail, presentUserSummary } from './users.presenters';
import { inviteUserBody, listUsersQuery, updateUserBody, userDetailEnvelope, usersPageBody } from './users.schemas';

/** Users (spec §4.4). The fixed paths (admin/list, roles/*) come before /:userId, which must be a uuid. */
export function createUsersRouter(deps: RouteDeps) {
  const { ctx } = deps;
  const role = createRoleRoutes(ctx);
  return declareRouter(
    deps,
    [
      role.adminUsers('/admin/list'),
      route(
        {
          method: 'get',
          path: '/roles/list',
          summary: 'Active roles',
          auth: 'user',
          permission: 'system:manage_roles',
          response: { description: '{ roles }', schema: rolesBody },
        },
        async () => ({ roles: (await listRoles(ctx, { activeOnly: true })).map(presentRole) }),
      ),
      role.create('/roles'),
      role.update('/roles/:roleId'),
      role.deactivate('/roles/:roleId'),
      route(
        {
          method: 'get',
          path: '/',
          summary: 'List users (query search, page, limit <= 100)',
          auth: 'user',
          permission: 'users:read',
          query: listUsersQuery,
          response: { description: '{ users, total, page, limit }', schema: usersPageBody },
        },
        async ({ query }) => {
          const { users: page, total } = await users.listUsers(ctx, query);
          return { users: page.map((u) => presentUserSummary(u.user, u.roles)), total, page: query.page, limit: query.limit };
        },
      ),
      // Beyond the spec (CONTRACT §6): invite a user, who sets a password through the mailed link.
      route(
        {
          method: 'post',
          path: '/',
          summary: 'Invite a user (beyond the spec): emails a set-password link',
          auth: 'user',
          permission: 'users:write',
          body: inviteUserBody,
          response: { status: 201, description: '{ user }', schema: userDetailEnvelope },
          errors: [404, 409],
        },
        async ({ principal, body }) => ({ user: presentUserDetail(await users.inviteUser(ctx, principal, body)) }),
      ),
      route(
        {
          method: 'get',
          path: '/:userId',
          summary: 'User detail with roles and permissions',
          auth: 'user',
          permission: 'users:read',
          params: userIdParams,
          response: { description: '{ user }', schema: userDetailEnvelope },
        },
        async ({ params }) => ({ user: presentUserDetail(await users.getUserDetail(ctx, params.userId)) }),
      ),
      route(
        {
          method: 'put',
          path: '/:userId',
          summary: 'Update a user',
          auth: 'user',
          permission: 'users:write',
          params: userIdParams,
          body: updateUserBody,
          response: { description: '{ user }', schema: userDetailEnvelope },
          errors: [409],
        },
        async ({ principal, params, body }) => ({ user: presentUserDetail(await users.updateUser(ctx, principal, params.userId, body)) }),
      ),
      route(
        {
          method: 'delete',
          path: '/:userId',
          summary: 'Deactivate a user and revoke their sessions',
          auth: 'user',
          permission: 'users:delete',
          params: userIdParams,
          response: { description: '{ user } (is_active false)', schema: userDetailEnvelope },
          errors: [409],
        },
        async ({ principal, params }) => ({ user: presentUserDetail(await users.deactivateUser(ctx, principal, params.userId)) }),
      ),
      // CONTRACT §11: an administrator resets a user's second factors (e.g. a lost phone); audited and mailed.
      route(
        {
          method: 'delete',
          path: '/:userId/mfa',
          summary: "Reset a user's second factors: every passkey, the authenticator app and the recovery codes",
          description:
            'Needs users:write and strictly more rights than every role the account holds (as for changing its email). Not for ' +
            'one\'s own account (403: use the account page, under its re-authentication rule). The user is mailed; sessions stay.',
          auth: 'user',
          permission: 'users:write',
          params: userIdParams,
          response: { status: 204, description: 'Reset (also when there was nothing to remove)', kind: 'empty' },
        },
        async ({ principal, params }) => {
          await resetUserFactors(ctx, principal, params.userId);
        },
      ),
      role.listOfUser('/:userId/roles'),
      role.assignToUser('/:userId/roles'),
      role.removeFromUser('/:userId/roles/:roleId'),
    ],
    { tags: ['Users'], secondFactorForAdmins: true },
  );
}

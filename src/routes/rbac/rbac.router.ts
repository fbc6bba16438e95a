import * as access from '../../services/role-assignment.service';
import { declareRouter, route, served } from '../route';
import type { RouteDeps } from '../types';
import { presentRoleRef } from '../users/users.presenters';
import { checkPermissionBody, hasPermissionBody, userAccessBody, userIdParams } from '../../wire/rbac/rbac.schemas';
import { createRoleRoutes, rolesApi } from './roles.routes';

/** RBAC (spec §4.5). Permissions come from the live lookup of `authenticate`, never from the token. */
export function createRbacRouter(deps: RouteDeps) {
  const role = createRoleRoutes();
  return declareRouter(
    deps,
    [
      served(deps, rolesApi.permissions),
      served(deps, rolesApi.list),
      served(deps, rolesApi.get),
      ...role.catalogueChanges,
      ...role.ofUser('/users'),
      route(
        {
          method: 'get',
          path: '/users/:userId/permissions',
          summary: 'Resolved roles and permissions',
          auth: 'user',
          permission: 'users:read',
          params: userIdParams,
          response: { description: '{ user_id, roles: [{ id, name, application }], permissions }', schema: userAccessBody },
        },
        async ({ params, ctx }) => {
          const held = await access.getUserAccess(ctx, params.userId);
          return { user_id: held.user.id, roles: held.roles.map(presentRoleRef), permissions: held.permissions };
        },
      ),
      route(
        {
          method: 'post',
          path: '/users/:userId/check-permission',
          summary: 'Does the user hold a permission?',
          auth: 'user',
          permission: 'users:read',
          params: userIdParams,
          body: checkPermissionBody,
          response: { description: '{ hasPermission }', schema: hasPermissionBody },
        },
        async ({ params, body, ctx }) => ({ hasPermission: await access.checkUserPermission(ctx, params.userId, body.permission) }),
      ),
      role.adminUsers('/admin-users'),
    ],
    { tags: ['RBAC'] },
  );
}

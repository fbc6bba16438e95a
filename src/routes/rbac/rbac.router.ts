import { Router } from 'express';
import { requireAdmin, requirePermission, requireRole } from '../../middleware/authorize';
import { validate } from '../../middleware/validate';
import * as roles from '../../services/roles.service';
import type { RouteDeps } from '../types';
import { presentRoleRef } from '../users/users.presenters';
import { presentPermission } from './rbac.presenters';
import {
  assignRoleBody,
  checkPermissionBody,
  createRoleBody,
  roleIdParams,
  updateRoleBody,
  userIdParams,
  userRoleParams,
} from './rbac.schemas';
import { createRoleHandlers } from './roles.handlers';

/** RBAC (spec §4.5). Permissions come from the live lookup of `authenticate`, never from the token. */
export function createRbacRouter({ ctx, authenticate }: RouteDeps): Router {
  const router = Router();
  const role = createRoleHandlers(ctx);
  router.use(authenticate());

  router.get('/permissions', requireAdmin(), async (_req, res) => {
    res.json({ permissions: (await roles.listPermissionCatalogue(ctx)).map(presentPermission) });
  });

  router.get('/roles', requireAdmin(), role.listAll);
  router.post('/roles', requireRole('super_admin'), validate({ body: createRoleBody }), role.create);
  router.put('/roles/:roleId', requireRole('super_admin'), validate({ params: roleIdParams, body: updateRoleBody }), role.update);
  router.delete('/roles/:roleId', requireRole('super_admin'), validate({ params: roleIdParams }), role.deactivate);

  router.get('/users/:userId/roles', requirePermission('users:read'), validate({ params: userIdParams }), role.listOfUser);
  router.post(
    '/users/:userId/roles',
    requirePermission('users:manage_roles'),
    validate({ params: userIdParams, body: assignRoleBody }),
    role.assignToUser,
  );
  router.delete(
    '/users/:userId/roles/:roleId',
    requirePermission('users:manage_roles'),
    validate({ params: userRoleParams }),
    role.removeFromUser,
  );

  router.get('/users/:userId/permissions', requirePermission('users:read'), validate({ params: userIdParams }), async (req, res) => {
    const access = await roles.getUserAccess(ctx, req.params.userId as string);
    res.json({ user_id: access.user.id, roles: access.roles.map(presentRoleRef), permissions: access.permissions });
  });

  router.post(
    '/users/:userId/check-permission',
    requirePermission('users:read'),
    validate({ params: userIdParams, body: checkPermissionBody }),
    async (req, res) => {
      res.json({ hasPermission: await roles.checkUserPermission(ctx, req.params.userId as string, req.body.permission) });
    },
  );

  router.get('/admin-users', requirePermission('system:manage_users'), role.adminUsers);

  return router;
}

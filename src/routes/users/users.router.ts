import { Router } from 'express';
import { principalOf } from '../../middleware/authenticate';
import { requirePermission, requireRole } from '../../middleware/authorize';
import { validate } from '../../middleware/validate';
import * as users from '../../services/users.service';
import { assignRoleBody, createRoleBody, roleIdParams, updateRoleBody, userIdParams, userRoleParams } from '../rbac/rbac.schemas';
import { createRoleHandlers } from '../rbac/roles.handlers';
import type { RouteDeps } from '../types';
import { presentUserDetail, presentUserSummary } from './users.presenters';
import { inviteUserBody, listUsersQuery, updateUserBody } from './users.schemas';

/** Users (spec §4.4). The fixed paths (admin/list, roles/*) come before /:userId, which must be a uuid. */
export function createUsersRouter({ ctx, authenticate }: RouteDeps): Router {
  const router = Router();
  const role = createRoleHandlers(ctx);
  router.use(authenticate());

  router.get('/admin/list', requirePermission('system:manage_users'), role.adminUsers);

  router.get('/roles/list', requirePermission('system:manage_roles'), role.listActive);
  router.post('/roles', requireRole('super_admin'), validate({ body: createRoleBody }), role.create);
  router.put('/roles/:roleId', requireRole('super_admin'), validate({ params: roleIdParams, body: updateRoleBody }), role.update);
  router.delete('/roles/:roleId', requireRole('super_admin'), validate({ params: roleIdParams }), role.deactivate);

  router.get('/', requirePermission('users:read'), validate({ query: listUsersQuery }), async (req, res) => {
    const query = req.query as unknown as { search?: string; page: number; limit: number };
    const { users: page, total } = await users.listUsers(ctx, query);
    res.json({ users: page.map((u) => presentUserSummary(u.user, u.roles)), total, page: query.page, limit: query.limit });
  });

  // Beyond the spec (CONTRACT §6): invite a user, who sets a password through the mailed link.
  router.post('/', requirePermission('users:write'), validate({ body: inviteUserBody }), async (req, res) => {
    res.status(201).json({ user: presentUserDetail(await users.inviteUser(ctx, principalOf(req), req.body)) });
  });

  router.get('/:userId', requirePermission('users:read'), validate({ params: userIdParams }), async (req, res) => {
    res.json({ user: presentUserDetail(await users.getUserDetail(ctx, req.params.userId as string)) });
  });

  router.put('/:userId', requirePermission('users:write'), validate({ params: userIdParams, body: updateUserBody }), async (req, res) => {
    res.json({ user: presentUserDetail(await users.updateUser(ctx, principalOf(req), req.params.userId as string, req.body)) });
  });

  router.delete('/:userId', requirePermission('users:delete'), validate({ params: userIdParams }), async (req, res) => {
    res.json({ user: presentUserDetail(await users.deactivateUser(ctx, principalOf(req), req.params.userId as string)) });
  });

  router.get('/:userId/roles', requirePermission('users:read'), validate({ params: userIdParams }), role.listOfUser);
  router.post(
    '/:userId/roles',
    requirePermission('users:manage_roles'),
    validate({ params: userIdParams, body: assignRoleBody }),
    role.assignToUser,
  );
  router.delete('/:userId/roles/:roleId', requirePermission('users:manage_roles'), validate({ params: userRoleParams }), role.removeFromUser);

  return router;
}

import type { RequestHandler } from 'express';
import { principalOf } from '../../middleware/authenticate';
import type { ServiceContext } from '../../services/context';
import * as roles from '../../services/roles.service';
import { presentAdminUser } from '../users/users.presenters';
import { presentRole } from './rbac.presenters';

/**
 * The role, role-assignment and admin-list handlers behind both URL sets, /api/users/* (spec §4.4) and /api/rbac/*
 * (§4.5): one implementation, each router only declares its paths and guards. Params and bodies are validated by
 * the route.
 */
export function createRoleHandlers(ctx: ServiceContext) {
  return {
    listAll: async (_req, res) => {
      res.json({ roles: (await roles.listRoles(ctx)).map(presentRole) });
    },
    listActive: async (_req, res) => {
      res.json({ roles: (await roles.listRoles(ctx, { activeOnly: true })).map(presentRole) });
    },
    create: async (req, res) => {
      res.status(201).json({ role: presentRole(await roles.createRole(ctx, req.body)) });
    },
    update: async (req, res) => {
      res.json({ role: presentRole(await roles.updateRole(ctx, req.params.roleId as string, req.body)) });
    },
    deactivate: async (req, res) => {
      res.json({ role: presentRole(await roles.deactivateRole(ctx, req.params.roleId as string)) });
    },
    listOfUser: async (req, res) => {
      res.json({ roles: (await roles.listUserRoles(ctx, req.params.userId as string)).map(presentRole) });
    },
    assignToUser: async (req, res) => {
      const result = await roles.assignUserRole(ctx, principalOf(req), req.params.userId as string, req.body);
      res.status(result.assigned ? 201 : 200).json({ roles: result.roles.map(presentRole) });
    },
    removeFromUser: async (req, res) => {
      await roles.removeUserRole(ctx, principalOf(req), req.params.userId as string, req.params.roleId as string);
      res.status(204).end();
    },
    adminUsers: async (_req, res) => {
      res.json({ users: (await roles.listAdminUsers(ctx)).map(presentAdminUser) });
    },
  } satisfies Record<string, RequestHandler>;
}

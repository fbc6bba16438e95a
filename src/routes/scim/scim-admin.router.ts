import type { ScimConnectionRow } from '../../db/repositories/scim.repo';
import * as scim from '../../services/scim/scim-connections.service';
import type { z } from 'zod';
import { badRequest, notFound } from '../../errors';
import { declareRouter, endpoint, serve } from '../route';
import type { RouteDeps } from '../types';
import {
  createdScimConnectionBody,
  createScimConnectionBody,
  scimConnectionEnvelope,
  scimConnectionIdParams,
  scimConnectionsBody,
  scimGroupIdParams,
  scimGroupRolesEnvelope,
  scimGroupsBody,
  setScimGroupRolesBody,
} from './scim-admin.schemas';

/** A connection, field by field (never its token or hash). */
export function presentScimConnection(c: ScimConnectionRow) {
  return {
    id: c.id,
    name: c.name,
    description: c.description,
    created_at: c.createdAt.toISOString(),
    last_used_at: c.lastUsedAt ? c.lastUsedAt.toISOString() : null,
  };
}

export function presentScimGroupRoles(g: scim.GroupWithRoles) {
  return {
    id: g.group.id,
    connection_id: g.group.connectionId,
    connection_name: g.connectionName,
    display_name: g.group.displayName,
    external_id: g.group.externalId,
    role_ids: g.roleIds,
  };
}

const zodIssueDetails = (issues: z.core.$ZodIssue[]) => issues.map((i) => ({ path: i.path.join('.') || '(root)', message: i.message }));
const connectionNotFound = () => notFound('SCIM connection');
const groupNotFound = () => notFound('SCIM group');
/** A malformed group id is an unknown group (404); a bad body is the usual 400 with details. */
const invalidGroupInput = (issues: z.core.$ZodIssue[], where: 'params' | 'query' | 'body') =>
  where === 'params' ? groupNotFound() : badRequest('Body is invalid', zodIssueDetails(issues));

const SCIM = ['SCIM'] as const;

/**
 * CONTRACT §20 (docs/scim.md): SCIM connections (their token is in the create and rotate answers only, which no cache
 * keeps) and the mapping of SCIM groups to roles. The console's SCIM pages are built from these same endpoints
 * (src/console/scim/scim.console.ts).
 */
export const scimAdminApi = {
  list: endpoint(
    {
      method: 'get',
      path: '/scim-connections',
      summary: 'List SCIM connections (never their tokens)',
      auth: 'user',
      permission: 'system:manage_users',
      response: { description: '{ connections }', schema: scimConnectionsBody },
    },
    async (_input, ctx) => ({ connections: (await scim.listConnections(ctx)).map(presentScimConnection) }),
  ),
  create: endpoint(
    {
      method: 'post',
      path: '/scim-connections',
      summary: 'Create a SCIM connection; its bearer token is returned once',
      auth: 'user',
      permission: 'system:manage_users',
      noStore: true,
      body: createScimConnectionBody,
      response: { status: 201, description: '{ connection, token } (Cache-Control: no-store)', schema: createdScimConnectionBody },
    },
    async ({ body, principal }, ctx) => {
      const { connection, token } = await scim.createConnection(ctx, principal, body);
      return { connection: presentScimConnection(connection), token };
    },
  ),
  get: endpoint(
    {
      method: 'get',
      path: '/scim-connections/:connectionId',
      summary: 'A SCIM connection (never its token)',
      auth: 'user',
      permission: 'system:manage_users',
      params: scimConnectionIdParams,
      invalid: connectionNotFound,
      response: { description: '{ connection }', schema: scimConnectionEnvelope },
    },
    async ({ params }, ctx) => ({ connection: presentScimConnection(await scim.getConnection(ctx, params.connectionId)) }),
  ),
  rotate: endpoint(
    {
      method: 'post',
      path: '/scim-connections/:connectionId/rotate',
      summary: "Replace a SCIM connection's token (returned once); the old token stops working at once",
      auth: 'user',
      permission: 'system:manage_users',
      noStore: true,
      params: scimConnectionIdParams,
      invalid: connectionNotFound,
      response: { description: '{ connection, token } (Cache-Control: no-store)', schema: createdScimConnectionBody },
    },
    async ({ params, principal }, ctx) => {
      const { connection, token } = await scim.rotateConnectionToken(ctx, principal, params.connectionId);
      return { connection: presentScimConnection(connection), token };
    },
  ),
  remove: endpoint(
    {
      method: 'delete',
      path: '/scim-connections/:connectionId',
      summary: 'Revoke a SCIM connection: its token stops working; its groups and the roles they granted go',
      auth: 'user',
      permission: 'system:manage_users',
      params: scimConnectionIdParams,
      invalid: connectionNotFound,
      response: { status: 204, description: 'Revoked', kind: 'empty' },
    },
    async ({ params, principal }, ctx) => {
      await scim.deleteConnection(ctx, principal, params.connectionId);
    },
  ),
  groups: endpoint(
    {
      method: 'get',
      path: '/scim-groups',
      summary: 'List the groups SCIM connections pushed, with the roles each is mapped to',
      auth: 'user',
      permission: 'users:manage_roles',
      response: { description: '{ groups }', schema: scimGroupsBody },
    },
    async (_input, ctx) => ({ groups: (await scim.listGroupsWithRoles(ctx)).map(presentScimGroupRoles) }),
  ),
  groupRoles: endpoint(
    {
      method: 'get',
      path: '/scim-groups/:groupId/roles',
      summary: 'The roles a SCIM group is mapped to',
      auth: 'user',
      permission: 'users:manage_roles',
      params: scimGroupIdParams,
      invalid: invalidGroupInput,
      response: {
        description: '{ group: { id, connection_id, display_name, external_id, role_ids } }',
        schema: scimGroupRolesEnvelope,
      },
    },
    async ({ params }, ctx) => ({ group: presentScimGroupRoles(await scim.getGroupRoles(ctx, params.groupId)) }),
  ),
  setGroupRoles: endpoint(
    {
      method: 'put',
      path: '/scim-groups/:groupId/roles',
      summary: 'Map a SCIM group to roles (never super_admin): its members hold them from the next request on',
      auth: 'user',
      permission: 'users:manage_roles',
      params: scimGroupIdParams,
      invalid: invalidGroupInput,
      body: setScimGroupRolesBody,
      response: {
        description: '{ group: { id, connection_id, display_name, external_id, role_ids } }',
        schema: scimGroupRolesEnvelope,
      },
      errors: [409],
    },
    async ({ params, body, principal }, ctx) => ({
      group: presentScimGroupRoles(await scim.setGroupRoles(ctx, principal, params.groupId, body.role_ids)),
    }),
  ),
};

export function createScimAdminRouter(deps: RouteDeps) {
  return declareRouter(deps, serve(deps, scimAdminApi), { tags: SCIM });
}

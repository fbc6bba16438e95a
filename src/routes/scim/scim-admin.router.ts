import type { ScimConnectionRow } from '../../db/repositories/scim.repo';
import * as scim from '../../services/scim/scim-connections.service';
import type { z } from 'zod';
import { badRequest, notFound } from '../../errors';
import { declareRouter, route } from '../route';
import type { RouteDeps } from '../types';
import {
  createdScimConnectionBody,
  createScimConnectionBody,
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

/**
 * CONTRACT §20 (docs/scim.md): SCIM connections (their token is in the create answer only, which no cache keeps)
 * and the mapping of SCIM groups to roles.
 */
export function createScimAdminRouter(deps: RouteDeps) {
  const { ctx } = deps;
  return declareRouter(
    deps,
    [
      route(
        {
          method: 'get',
          path: '/scim-connections',
          summary: 'List SCIM connections (never their tokens)',
          auth: 'user',
          permission: 'system:manage_users',
          response: { description: '{ connections }', schema: scimConnectionsBody },
        },
        async () => ({ connections: (await scim.listConnections(ctx)).map(presentScimConnection) }),
      ),
      route(
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
        async ({ body, principal }) => {
          const { connection, token } = await scim.createConnection(ctx, principal, body);
          return { connection: presentScimConnection(connection), token };
        },
      ),
      route(
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
        async ({ params, principal }) => {
          await scim.deleteConnection(ctx, principal, params.connectionId);
        },
      ),
      route(
        {
          method: 'get',
          path: '/scim-groups',
          summary: 'List the groups SCIM connections pushed, with the roles each is mapped to',
          auth: 'user',
          permission: 'users:manage_roles',
          response: { description: '{ groups }', schema: scimGroupsBody },
        },
        async () => ({ groups: (await scim.listGroupsWithRoles(ctx)).map(presentScimGroupRoles) }),
      ),
      route(
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
        async ({ params }) => ({ group: presentScimGroupRoles(await scim.getGroupRoles(ctx, params.groupId)) }),
      ),
      route(
        {
          method: 'put',
          path: '/scim-groups/:groupId/roles',
          summary: 'Map a SCIM group to roles (never super_admin): its members hold them from the next request on',
          auth: 'user',
          permission: 'users:manage_roles',
          params: scimGroupIdParams,
          body: setScimGroupRolesBody,
          response: {
            description: '{ group: { id, connection_id, display_name, external_id, role_ids } }',
            schema: scimGroupRolesEnvelope,
          },
          errors: [409],
        },
        async ({ params, body, principal }) => ({
          group: presentScimGroupRoles(await scim.setGroupRoles(ctx, principal, params.groupId, body.role_ids)),
        }),
      ),
    ],
    { tags: ['SCIM'] },
  );
}

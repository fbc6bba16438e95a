import type { ScimConnectionRow } from '../../db/repositories/scim.repo';
import * as scim from '../../services/scim/scim-connections.service';
import { endpointsWith, idNotFound, removed, servingRouter } from '../route';
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
} from '../../wire/scim/scim-admin.schemas';

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

const MANAGE_USERS = { auth: 'user', permission: 'system:manage_users' } as const;
const MANAGE_ROLES = { auth: 'user', permission: 'users:manage_roles' } as const;
const connections = endpointsWith(MANAGE_USERS);
const aConnection = endpointsWith({ ...MANAGE_USERS, params: scimConnectionIdParams, invalid: idNotFound('SCIM connection') });
const groups = endpointsWith(MANAGE_ROLES);
const aGroup = endpointsWith({ ...MANAGE_ROLES, params: scimGroupIdParams, invalid: idNotFound('SCIM group') });
const withToken = { description: '{ connection, token } (Cache-Control: no-store)', schema: createdScimConnectionBody };
const groupRoles = { description: '{ group: { id, connection_id, display_name, external_id, role_ids } }', schema: scimGroupRolesEnvelope };

/**
 * CONTRACT §20 (docs/scim.md): SCIM connections (their token is in the create and rotate answers only, which no cache
 * keeps) and the mapping of SCIM groups to roles. The console's SCIM pages are built from these same endpoints
 * (src/console/scim/scim.console.ts).
 */
export const scimAdminApi = {
  list: connections.get(
    '/scim-connections',
    { summary: 'List SCIM connections (never their tokens)', response: { description: '{ connections }', schema: scimConnectionsBody } },
    async (_input, ctx) => ({ connections: (await scim.listConnections(ctx)).map(presentScimConnection) }),
  ),
  create: connections.post(
    '/scim-connections',
    {
      summary: 'Create a SCIM connection; its bearer token is returned once',
      noStore: true,
      body: createScimConnectionBody,
      response: { status: 201, ...withToken },
    },
    async ({ body, principal }, ctx) => {
      const { connection, token } = await scim.createConnection(ctx, principal, body);
      return { connection: presentScimConnection(connection), token };
    },
  ),
  get: aConnection.get(
    '/scim-connections/:connectionId',
    { summary: 'A SCIM connection (never its token)', response: { description: '{ connection }', schema: scimConnectionEnvelope } },
    async ({ params }, ctx) => ({ connection: presentScimConnection(await scim.getConnection(ctx, params.connectionId)) }),
  ),
  rotate: aConnection.post(
    '/scim-connections/:connectionId/rotate',
    {
      summary: "Replace a SCIM connection's token (returned once); the old token stops working at once",
      noStore: true,
      response: withToken,
    },
    async ({ params, principal }, ctx) => {
      const { connection, token } = await scim.rotateConnectionToken(ctx, principal, params.connectionId);
      return { connection: presentScimConnection(connection), token };
    },
  ),
  remove: aConnection.delete(
    '/scim-connections/:connectionId',
    {
      summary: 'Revoke a SCIM connection: its token stops working; its groups and the roles they granted go',
      response: removed('Revoked'),
    },
    async ({ params, principal }, ctx) => {
      await scim.deleteConnection(ctx, principal, params.connectionId);
    },
  ),
  groups: groups.get(
    '/scim-groups',
    {
      summary: 'List the groups SCIM connections pushed, with the roles each is mapped to',
      response: { description: '{ groups }', schema: scimGroupsBody },
    },
    async (_input, ctx) => ({ groups: (await scim.listGroupsWithRoles(ctx)).map(presentScimGroupRoles) }),
  ),
  groupRoles: aGroup.get(
    '/scim-groups/:groupId/roles',
    { summary: 'The roles a SCIM group is mapped to', response: groupRoles },
    async ({ params }, ctx) => ({ group: presentScimGroupRoles(await scim.getGroupRoles(ctx, params.groupId)) }),
  ),
  setGroupRoles: aGroup.put(
    '/scim-groups/:groupId/roles',
    {
      summary: 'Map a SCIM group to roles (never super_admin): its members hold them from the next request on',
      body: setScimGroupRolesBody,
      response: groupRoles,
      errors: [409],
    },
    async ({ params, body, principal }, ctx) => ({
      group: presentScimGroupRoles(await scim.setGroupRoles(ctx, principal, params.groupId, body.role_ids)),
    }),
  ),
};

export const createScimAdminRouter = servingRouter(scimAdminApi, { tags: ['SCIM'] });

import { randomUUID } from 'node:crypto';
import { withTransaction } from '../../db';
import { findRoleById } from '../../db/repositories/roles.repo';
import {
  deleteScimConnection,
  findScimConnectionByTokenHash,
  findScimGroup,
  insertScimConnection,
  listScimConnections,
  listScimGroupRoleIds,
  listScimGroups,
  setScimGroupRoles,
  touchScimConnection,
  type ScimConnectionRow,
  type ScimGroupRow,
} from '../../db/repositories/scim.repo';
import { badRequest, notFound, unauthorized } from '../../errors';
import { randomToken, safeEqual, sha256Hex } from '../../lib/crypto';
import type { ServiceContext } from '../context';
import { enforce, isGlobalSuperAdmin, mayGrantRole, type Actor } from '../rbac-policy';

/**
 * SCIM connections (CONTRACT §20): one per directory, each with its own bearer token (shown once, only its SHA-256
 * stored), each its own actor in the audit trail. And the mapping of a connection's groups to roles.
 */

/** Tokens start with this, so a leaked one is recognisable (secret scanners, logs). */
export const TOKEN_PREFIX = 'scim_';

export async function listConnections(ctx: ServiceContext): Promise<ScimConnectionRow[]> {
  return listScimConnections(ctx.db);
}

export async function createConnection(
  ctx: ServiceContext,
  actor: Actor,
  input: { name: string; description?: string },
): Promise<{ connection: ScimConnectionRow; token: string }> {
  const token = `${TOKEN_PREFIX}${randomToken()}`;
  const connection = await withTransaction(ctx.db, async (trx) => {
    const created = await insertScimConnection(trx, {
      id: randomUUID(),
      name: input.name.trim(),
      description: (input.description ?? '').trim(),
      tokenHash: sha256Hex(token),
      createdBy: actor.userId,
      now: ctx.clock.now(),
    });
    await ctx.events.record(trx, {
      type: 'scim.connection.created',
      actorId: actor.userId,
      subjectId: created.id,
      detail: { name: created.name },
    });
    return created;
  });
  return { connection, token };
}

/** Revokes a connection: its token stops working at once; its groups (and the roles they granted) and externalIds go. */
export async function deleteConnection(ctx: ServiceContext, actor: Actor, id: string): Promise<void> {
  await withTransaction(ctx.db, async (trx) => {
    const deleted = await deleteScimConnection(trx, id);
    if (!deleted) throw notFound('SCIM connection');
    await ctx.events.record(trx, { type: 'scim.connection.deleted', actorId: actor.userId, subjectId: id, detail: { name: deleted.name } });
  });
}

/**
 * The connection a bearer token belongs to: looked up by its SHA-256 (a hash lookup reveals nothing about the token
 * by its timing), then compared in constant time. 401 for a missing, unknown or revoked token.
 */
export async function authenticateConnection(ctx: ServiceContext, token: string | undefined): Promise<ScimConnectionRow> {
  if (!token || !token.startsWith(TOKEN_PREFIX) || token.length > 200) throw unauthorized('A SCIM connection token is required');
  const hash = sha256Hex(token);
  const found = await findScimConnectionByTokenHash(ctx.db, hash);
  if (!found || !safeEqual(found.tokenHash, hash)) throw unauthorized('Invalid or revoked SCIM connection token');
  await touchScimConnection(ctx.db, found.connection.id, ctx.clock.now());
  return found.connection;
}

// ---------------------------------------------------------------------------------------------------------------
// Group -> roles

export interface GroupWithRoles {
  group: ScimGroupRow;
  roleIds: string[];
}

/** Every group of every connection with its mapped roles (the console). */
export async function listGroupsWithRoles(ctx: ServiceContext): Promise<GroupWithRoles[]> {
  const { rows } = await listScimGroups(ctx.db, null, { offset: 0, limit: 1000 });
  return Promise.all(rows.map(async (group) => ({ group, roleIds: await listScimGroupRoleIds(ctx.db, group.id) })));
}

export async function getGroupRoles(ctx: ServiceContext, groupId: string): Promise<GroupWithRoles> {
  const group = await findScimGroup(ctx.db, null, groupId);
  if (!group) throw notFound('SCIM group');
  return { group, roleIds: await listScimGroupRoleIds(ctx.db, groupId) };
}

/**
 * Maps a group to roles (replacing its mapping). Membership grants them from the next request on (the permission
 * lookup is live). super_admin is refused (400); any other role only under the rule of granting it to one account
 * (rbac-policy mayGrantRole), since the mapping grants it to every member.
 */
export async function setGroupRoles(
  ctx: ServiceContext,
  actor: Actor,
  groupId: string,
  roleIds: readonly string[],
): Promise<GroupWithRoles> {
  const ids = [...new Set(roleIds)].sort();
  return withTransaction(ctx.db, async (trx) => {
    const group = await findScimGroup(trx, null, groupId, true);
    if (!group) throw notFound('SCIM group');
    const names: string[] = [];
    for (const [i, id] of ids.entries()) {
      const role = await findRoleById(trx, id);
      if (!role) throw badRequest('Body is invalid', [{ path: `role_ids.${i}`, message: `No role has the id ${id}` }]);
      if (isGlobalSuperAdmin(role)) {
        throw badRequest('Body is invalid', [{ path: `role_ids.${i}`, message: 'A SCIM group is never mapped to super_admin' }]);
      }
      enforce(mayGrantRole(actor, role));
      names.push(role.name);
    }
    const before = await listScimGroupRoleIds(trx, groupId);
    await setScimGroupRoles(trx, groupId, ids);
    if (before.join() !== ids.join()) {
      await ctx.events.record(trx, {
        type: 'scim.group.roles_changed',
        actorId: actor.userId,
        subjectId: groupId,
        detail: { display_name: group.displayName, role_ids: ids, roles: names, previous_role_ids: before },
      });
    }
    return { group, roleIds: ids };
  });
}

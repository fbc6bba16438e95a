import { randomUUID } from 'node:crypto';
import { withTransaction, type DbOrTrx } from '../../db';
import { findRoleById } from '../../db/repositories/roles.repo';
import {
  deleteScimConnection,
  findScimConnection,
  findScimConnectionByTokenHash,
  findScimGroup,
  insertScimConnection,
  listScimConnections,
  listScimGroupRoleIds,
  listScimGroups,
  setScimConnectionTokenHash,
  setScimGroupRoles,
  touchScimConnection,
  type ScimConnectionRow,
  type ScimGroupRow,
} from '../../db/repositories/scim.repo';
import { messagesFor } from '../../i18n';
import { badRequest, found, unauthorized } from '../../errors';
import { newHashedSecret, safeEqual, sha256Hex } from '../../lib/crypto';
import type { ServiceContext } from '../context';
import { enforce, isGlobalSuperAdmin, mayGrantRole, type Actor } from '../rbac-policy';
import { granterOf } from '../role-assignment.service';

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
  const { secret: token, hash } = newHashedSecret(TOKEN_PREFIX);
  const connection = await withTransaction(ctx.db, async (trx) => {
    const created = await insertScimConnection(trx, {
      id: randomUUID(),
      name: input.name.trim(),
      description: (input.description ?? '').trim(),
      tokenHash: hash,
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

export async function getConnection(ctx: ServiceContext, id: string): Promise<ScimConnectionRow> {
  return found(await findScimConnection(ctx.db, id), 'SCIM connection');
}

/**
 * Gives a connection a new token (shown once): the old one stops working at once; the connection keeps its groups,
 * their role mappings and what it knows of accounts, so the directory only needs the new token.
 */
export async function rotateConnectionToken(
  ctx: ServiceContext,
  actor: Actor,
  id: string,
): Promise<{ connection: ScimConnectionRow; token: string }> {
  const { secret: token, hash } = newHashedSecret(TOKEN_PREFIX);
  const connection = await withTransaction(ctx.db, async (trx) => {
    const rotated = found(await setScimConnectionTokenHash(trx, id, hash), 'SCIM connection');
    await ctx.events.record(trx, {
      type: 'scim.connection.token_rotated',
      actorId: actor.userId,
      subjectId: id,
      detail: { name: rotated.name },
    });
    return rotated;
  });
  return { connection, token };
}

/** Revokes a connection: its token stops working at once; its groups (and the roles they granted) and externalIds go. */
export async function deleteConnection(ctx: ServiceContext, actor: Actor, id: string): Promise<void> {
  await withTransaction(ctx.db, async (trx) => {
    const deleted = found(await deleteScimConnection(trx, id), 'SCIM connection');
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
  /** The name of the connection that pushed it. */
  connectionName: string;
  roleIds: string[];
}

const connectionNameOf = async (db: DbOrTrx, id: string) => (await findScimConnection(db, id))?.name ?? '';

/** Every group of every connection with its mapped roles (the console). */
export async function listGroupsWithRoles(ctx: ServiceContext): Promise<GroupWithRoles[]> {
  const { rows } = await listScimGroups(ctx.db, null, { offset: 0, limit: 1000 });
  const names = new Map((await listScimConnections(ctx.db)).map((c) => [c.id, c.name]));
  return Promise.all(
    rows.map(async (group) => ({
      group,
      connectionName: names.get(group.connectionId) ?? '',
      roleIds: await listScimGroupRoleIds(ctx.db, group.id),
    })),
  );
}

export async function getGroupRoles(ctx: ServiceContext, groupId: string): Promise<GroupWithRoles> {
  const group = found(await findScimGroup(ctx.db, null, groupId), 'SCIM group');
  return {
    group,
    connectionName: await connectionNameOf(ctx.db, group.connectionId),
    roleIds: await listScimGroupRoleIds(ctx.db, groupId),
  };
}

/**
 * Maps a group to roles (replacing its mapping). Membership grants them from the next request on (the permission
 * lookup is live). super_admin is refused (400); any other role the mapping adds only under the rule of granting it to
 * one account (rbac-policy mayGrantRole: permissions and API scopes), since the mapping grants it to every member. A
 * role already mapped may be kept by someone who could not have added it (the console keeps what it does not offer).
 */
export async function setGroupRoles(
  ctx: ServiceContext,
  actor: Actor,
  groupId: string,
  roleIds: readonly string[],
): Promise<GroupWithRoles> {
  const ids = [...new Set(roleIds)].sort();
  return withTransaction(ctx.db, async (trx) => {
    const group = found(await findScimGroup(trx, null, groupId, true), 'SCIM group');
    const names: string[] = [];
    const granter = await granterOf(trx, actor);
    const before = await listScimGroupRoleIds(trx, groupId);
    for (const [i, id] of ids.entries()) {
      const role = await findRoleById(trx, id);
      if (!role) throw badRequest('Body is invalid', [{ path: `role_ids.${i}`, message: `No role has the id ${id}` }]);
      if (isGlobalSuperAdmin(role)) {
        throw badRequest('Body is invalid', [{ path: `role_ids.${i}`, message: messagesFor('en').validation.scimGroupSuperAdmin }]);
      }
      // Only a role the mapping adds is granted by this change: one it keeps was granted before, by whoever mapped it.
      if (!before.includes(id)) enforce(mayGrantRole(granter, role));
      names.push(role.name);
    }
    await setScimGroupRoles(trx, groupId, ids);
    if (before.join() !== ids.join()) {
      await ctx.events.record(trx, {
        type: 'scim.group.roles_changed',
        actorId: actor.userId,
        subjectId: groupId,
        detail: { display_name: group.displayName, role_ids: ids, roles: names, previous_role_ids: before },
      });
    }
    return { group, connectionName: await connectionNameOf(trx, group.connectionId), roleIds: ids };
  });
}

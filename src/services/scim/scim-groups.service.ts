import { randomUUID } from 'node:crypto';
import { withTransaction, type DbOrTrx } from '../../db';
import {
  addScimGroupMembers,
  deleteScimGroup,
  existingUserIds,
  findScimGroup,
  insertScimGroup,
  listScimGroupMembers,
  listScimGroups,
  removeScimGroupMembers,
  updateScimGroup,
  type ScimConnectionRow,
  type ScimGroupRow,
} from '../../db/repositories/scim.repo';
import { ScimError } from '../../errors';
import type { ServiceContext } from '../context';
import { compileFilter, GROUP_FILTERS } from './filter';
import { groupResource, readGroup, readPatch, type GroupInput, type PatchOperation, type Resource } from './resources';
import { applyPatch, assertVersion, scimDbError, type ListQuery, type ScimPage, type ScimWrite } from './scim-users.service';

/**
 * SCIM Groups (CONTRACT §20): a connection's groups and their members (accounts). A group is not a role: an
 * administrator maps it to roles (scim-group-roles.service.ts), and membership grants them while it lasts. Every
 * change locks the group row first, then writes its members in user id order, so two changes of one group at once
 * run one after the other and lose no member.
 */

export const GROUP_NOT_FOUND = () => new ScimError('not_found', 'Group not found');
const NAME_TAKEN = 'Another group of this connection has this externalId';
/** At most this many member ids are named in an audit event's detail (the counts are always exact). */
const AUDITED_MEMBERS = 100;

export async function listGroups(
  ctx: ServiceContext,
  connection: ScimConnectionRow,
  query: ListQuery & { withMembers: boolean },
): Promise<ScimPage> {
  const filter = query.filter === undefined ? undefined : compileFilter(query.filter, GROUP_FILTERS);
  const { rows, total } = await listScimGroups(ctx.db, connection.id, { filter, offset: query.startIndex - 1, limit: query.count });
  const members = query.withMembers
    ? await listScimGroupMembers(
        ctx.db,
        rows.map((g) => g.id),
      )
    : new Map<string, string[]>();
  return {
    total,
    startIndex: query.startIndex,
    resources: rows.map((g) => groupResource(g, members.get(g.id) ?? [], ctx.config.baseUrl)),
  };
}

async function represent(db: DbOrTrx, group: ScimGroupRow, baseUrl: string): Promise<Resource> {
  const members = await listScimGroupMembers(db, [group.id]);
  return groupResource(group, members.get(group.id) ?? [], baseUrl);
}

export async function getGroup(ctx: ServiceContext, connection: ScimConnectionRow, groupId: string): Promise<Resource> {
  const group = await findScimGroup(ctx.db, connection.id, groupId);
  if (!group) throw GROUP_NOT_FOUND();
  return represent(ctx.db, group, ctx.config.baseUrl);
}

/** Members must be accounts: an unknown id is 400 `invalidValue`. */
async function assertMembers(db: DbOrTrx, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  const known = await existingUserIds(db, ids);
  const unknown = ids.find((id) => !known.has(id));
  if (unknown !== undefined) throw new ScimError('validation_error', `members: ${unknown} is not a user`, 'invalidValue');
}

function memberDetail(added: readonly string[], removed: readonly string[]) {
  return {
    members_added: added.length,
    members_removed: removed.length,
    added_user_ids: added.slice(0, AUDITED_MEMBERS),
    removed_user_ids: removed.slice(0, AUDITED_MEMBERS),
  };
}

export async function createGroup(ctx: ServiceContext, connection: ScimConnectionRow, body: unknown): Promise<Resource> {
  const input = readGroup(body);
  const now = ctx.clock.now();
  try {
    const group = await withTransaction(ctx.db, async (trx) => {
      await assertMembers(trx, input.members);
      const created = await insertScimGroup(trx, {
        id: randomUUID(),
        connectionId: connection.id,
        displayName: input.displayName,
        externalId: input.externalId,
        now,
      });
      await addScimGroupMembers(trx, created.id, input.members);
      await ctx.events.record(trx, {
        type: 'scim.group.created',
        subjectId: created.id,
        detail: { scim_connection_id: connection.id, display_name: created.displayName, ...memberDetail([...input.members].sort(), []) },
      });
      return created;
    });
    return await represent(ctx.db, group, ctx.config.baseUrl);
  } catch (err) {
    throw scimDbError(err, NAME_TAKEN);
  }
}

/**
 * Locks the group, checks the version, and writes what `change` makes of the current resource: its name and
 * externalId, the members added and removed (diffed against the members read under the lock).
 */
async function changeGroup(
  ctx: ServiceContext,
  connection: ScimConnectionRow,
  groupId: string,
  ifMatch: string | undefined,
  change: (current: Resource, members: readonly string[]) => GroupInput,
): Promise<Resource> {
  const now = ctx.clock.now();
  try {
    const group = await withTransaction(ctx.db, async (trx) => {
      const locked = await findScimGroup(trx, connection.id, groupId, true);
      if (!locked) throw GROUP_NOT_FOUND();
      const members = (await listScimGroupMembers(trx, [locked.id])).get(locked.id) ?? [];
      const current = groupResource(locked, members, ctx.config.baseUrl);
      assertVersion(current, ifMatch);
      const input = change(current, members);
      const before = new Set(members);
      const after = new Set(input.members);
      const added = [...after].filter((id) => !before.has(id)).sort();
      const removed = [...before].filter((id) => !after.has(id)).sort();
      await assertMembers(trx, added);
      const renamed = input.displayName !== locked.displayName || input.externalId !== locked.externalId;
      if (!renamed && added.length === 0 && removed.length === 0) return locked;
      await updateScimGroup(trx, locked.id, input, now);
      await addScimGroupMembers(trx, locked.id, added);
      await removeScimGroupMembers(trx, locked.id, removed);
      const fields = [
        ...(input.displayName !== locked.displayName ? ['displayName'] : []),
        ...(input.externalId !== locked.externalId ? ['externalId'] : []),
        ...(added.length || removed.length ? ['members'] : []),
      ];
      await ctx.events.record(trx, {
        type: 'scim.group.changed',
        subjectId: locked.id,
        detail: { scim_connection_id: connection.id, display_name: input.displayName, fields, ...memberDetail(added, removed) },
      });
      return locked;
    });
    const changed = await findScimGroup(ctx.db, connection.id, group.id);
    if (!changed) throw GROUP_NOT_FOUND();
    return await represent(ctx.db, changed, ctx.config.baseUrl);
  } catch (err) {
    throw scimDbError(err, NAME_TAKEN);
  }
}

export const replaceGroup: ScimWrite = async (ctx, connection, groupId, body, ifMatch) => {
  const input = readGroup(body);
  return changeGroup(ctx, connection, groupId, ifMatch, () => input);
};

/** PATCH: add/remove/replace members (with and without a filter), rename; through scim-patch on the current resource. */
export const patchGroup: ScimWrite = async (ctx, connection, groupId, body, ifMatch) => {
  const operations = readPatch(body);
  return changeGroup(ctx, connection, groupId, ifMatch, (current, members) => {
    // Members are compared by value only: what a directory sends beside it (display, $ref) is not kept.
    const bare = { ...current, members: members.map((value) => ({ value })) };
    return readGroup(applyPatch(bare, operations.map(bareMembers)));
  });
};

/**
 * Members in a PATCH value compared by `value` alone: Entra ID removes `[{ "$ref": null, "value": "…" }]` and Okta
 * sends `display`, which the stored members (bare values) would never deep-equal.
 */
function bareMembers(op: PatchOperation): PatchOperation {
  const bare = (v: unknown) =>
    Array.isArray(v) ? v.map((m: unknown) => (m && typeof m === 'object' && 'value' in m ? { value: m.value } : m)) : v;
  if (op.path?.toLowerCase() === 'members') return { ...op, value: bare(op.value) };
  if (!op.path && op.value && typeof op.value === 'object' && !Array.isArray(op.value)) {
    const value = Object.fromEntries(Object.entries(op.value).map(([k, v]) => [k, k.toLowerCase() === 'members' ? bare(v) : v]));
    return { ...op, value };
  }
  return op;
}

export async function deleteGroup(
  ctx: ServiceContext,
  connection: ScimConnectionRow,
  groupId: string,
  ifMatch: string | undefined,
): Promise<void> {
  await withTransaction(ctx.db, async (trx) => {
    const locked = await findScimGroup(trx, connection.id, groupId, true);
    if (!locked) throw GROUP_NOT_FOUND();
    assertVersion(await represent(trx, locked, ctx.config.baseUrl), ifMatch);
    await deleteScimGroup(trx, locked.id);
    await ctx.events.record(trx, {
      type: 'scim.group.deleted',
      subjectId: locked.id,
      detail: { scim_connection_id: connection.id, display_name: locked.displayName },
    });
  });
}

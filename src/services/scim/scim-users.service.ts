import { randomUUID } from 'node:crypto';
import { scimPatch, ScimError as ScimPatchError, type ScimResource } from 'scim-patch';
import { withTransaction, type DbOrTrx } from '../../db';
import { isUniqueViolation, mapDbError } from '../../db/pg-errors';
import { listRolesHeldByUser } from '../../db/repositories/roles.repo';
import {
  deleteAccount,
  findScimUser,
  listScimUsers,
  upsertScimUser,
  type ScimConnectionRow,
  type ScimUserRecord,
} from '../../db/repositories/scim.repo';
import { insertUser, lockUser, updateUser as updateUserRow } from '../../db/repositories/users.repo';
import { ScimError } from '../../errors';
import type { ServiceContext } from '../context';
import { ADMIN_TIER, isAdminPermission } from '../rbac-policy';
import { applyAccountChange, type AccountPatch } from '../users.service';
import { compileFilter, USER_FILTERS } from './filter';
import { readPatch, readUser, userResource, versionOf, type Resource, type UserInput } from './resources';

/**
 * SCIM Users (CONTRACT §20): accounts as a connection provisions them. A connection sees every account (a directory
 * matches existing accounts by `userName` before it creates one) but never changes, deactivates or deletes one that
 * holds an admin-tier role. Account changes go through the admin API's own path (applyAccountChange), so
 * `active: false` revokes every session and token exactly as a deactivation does.
 */

export const USER_NOT_FOUND = () => new ScimError('not_found', 'User not found');
const EMAIL_TAKEN = 'An account with this userName (email) already exists';

/** A PUT or PATCH of one resource of a connection: its id, the request body, and the request's If-Match. */
export type ScimWrite = (
  ctx: ServiceContext,
  connection: ScimConnectionRow,
  id: string,
  body: unknown,
  ifMatch: string | undefined,
) => Promise<Resource>;

export interface ListQuery {
  filter?: string;
  /** 1-based (RFC 7644 §3.4.2.4). */
  startIndex: number;
  count: number;
}

export interface ScimPage {
  total: number;
  startIndex: number;
  resources: Resource[];
}

export async function listUsers(ctx: ServiceContext, connection: ScimConnectionRow, query: ListQuery): Promise<ScimPage> {
  const filter = query.filter === undefined ? undefined : compileFilter(query.filter, USER_FILTERS);
  const { rows, total } = await listScimUsers(ctx.db, connection.id, { filter, offset: query.startIndex - 1, limit: query.count });
  return { total, startIndex: query.startIndex, resources: rows.map((r) => userResource(r, ctx.config.baseUrl)) };
}

export async function getUser(ctx: ServiceContext, connection: ScimConnectionRow, userId: string): Promise<Resource> {
  const record = await findScimUser(ctx.db, connection.id, userId);
  if (!record) throw USER_NOT_FOUND();
  return userResource(record, ctx.config.baseUrl);
}

/** `If-Match` (RFC 7644 §3.14): `*` or a list of versions, one of which must be the current one; else 412. */
export function assertVersion(current: Resource, ifMatch: string | undefined): void {
  if (ifMatch === undefined) return;
  const wanted = ifMatch.split(',').map((v) => v.trim());
  if (wanted.includes('*')) return;
  const version = versionOf(current);
  const bare = (v: string) => v.replace(/^W\//, '');
  if (!wanted.some((v) => bare(v) === bare(version))) {
    throw new ScimError('conflict', 'The resource changed since the version in If-Match', undefined, { status: 412 });
  }
}

/**
 * CONTRACT §20 and §23 ("admin policy by permission"): admins are managed here, not by a directory (403, no scimType).
 * An administrator is an account holding an admin-tier role (assigned, or through a group), or a global role assigned
 * here that grants any permission, whatever its name; deactivated roles count (reactivating would hand them back).
 * A role held only through one of the directory's groups does not protect the account: the directory could take the
 * membership away first.
 */
async function assertNotAdmin(db: DbOrTrx, userId: string): Promise<void> {
  const held = (await listRolesHeldByUser(db, userId)).filter((r) => r.application === null);
  const adminTier = held.some((r) => ADMIN_TIER.some((tier) => tier === r.name));
  const assignedRights = held.some((r) => r.assigned && r.permissions.some(isAdminPermission));
  if (adminTier || assignedRights) {
    throw new ScimError('forbidden', 'This account holds administrator rights: it is managed by administrators, not by a directory');
  }
}

export async function createUser(ctx: ServiceContext, connection: ScimConnectionRow, body: unknown): Promise<Resource> {
  const input = readUser(body);
  const now = ctx.clock.now();
  try {
    const id = await withTransaction(ctx.db, async (trx) => {
      const created = await insertUser(trx, {
        id: randomUUID(),
        email: input.email,
        firstName: input.firstName,
        lastName: input.lastName,
        passwordHash: null,
        emailVerified: false,
        now,
      });
      if (!input.active) await updateUserRow(trx, created.id, { isActive: false }, now);
      await upsertScimUser(trx, { connectionId: connection.id, userId: created.id, ...scimFacts(input), now });
      await ctx.events.record(trx, { type: 'user.created', subjectId: created.id, detail: { scim_connection_id: connection.id } });
      return created.id;
    });
    return await getUser(ctx, connection, id);
  } catch (err) {
    throw scimDbError(err);
  }
}

function scimFacts(input: UserInput) {
  return { externalId: input.externalId, userName: input.userName, displayName: input.displayName, enterprise: input.enterprise };
}

/** A unique violation is 409 `uniqueness` (the email, or the connection's externalId); other database errors as usual. */
export function scimDbError(err: unknown, what = EMAIL_TAKEN): unknown {
  if (isUniqueViolation(err)) {
    const constraint = typeof err === 'object' && err !== null && 'constraint' in err ? String(err.constraint) : '';
    const message = /external_id/.test(constraint)
      ? 'Another resource of this connection has this externalId'
      : /user_name/.test(constraint)
        ? 'Another user of this connection has this userName'
        : what;
    return new ScimError('conflict', message, 'uniqueness');
  }
  return mapDbError(err);
}

/**
 * Locks the account, checks the version and the admin rule, then writes what `change` makes of the current
 * resource. Only what differs is written and audited; nothing differing writes nothing.
 */
async function changeUser(
  ctx: ServiceContext,
  connection: ScimConnectionRow,
  userId: string,
  ifMatch: string | undefined,
  change: (current: Resource) => UserInput,
): Promise<Resource> {
  const now = ctx.clock.now();
  try {
    await withTransaction(ctx.db, async (trx) => {
      if (!(await lockUser(trx, userId))) throw USER_NOT_FOUND();
      const record = await findScimUser(trx, connection.id, userId);
      if (!record) throw USER_NOT_FOUND();
      const current = userResource(record, ctx.config.baseUrl);
      assertVersion(current, ifMatch);
      const input = change(current);
      await assertNotAdmin(trx, userId);
      await writeUser(ctx, trx, connection, record, input, now);
    });
  } catch (err) {
    throw scimDbError(err);
  }
  return getUser(ctx, connection, userId);
}

async function writeUser(
  ctx: ServiceContext,
  trx: DbOrTrx,
  connection: ScimConnectionRow,
  record: ScimUserRecord,
  input: UserInput,
  now: Date,
): Promise<void> {
  const { user } = record;
  const patch: AccountPatch = {};
  if (input.firstName !== user.firstName) patch.firstName = input.firstName;
  if (input.lastName !== user.lastName) patch.lastName = input.lastName;
  if (input.email !== user.email) patch.email = input.email;
  if (input.active !== user.isActive) patch.isActive = input.active;
  const scimFields: string[] = [];
  if (input.externalId !== record.externalId) scimFields.push('externalId');
  if (input.userName !== record.userName) scimFields.push('userName');
  if (input.displayName !== record.displayName) scimFields.push('displayName');
  if (JSON.stringify(input.enterprise) !== JSON.stringify(record.enterprise)) scimFields.push('enterprise');
  const fields = [...Object.keys(patch), ...scimFields];
  if (fields.length === 0) return;
  if (scimFields.length) await upsertScimUser(trx, { connectionId: connection.id, userId: user.id, ...scimFacts(input), now });
  await applyAccountChange(ctx, trx, user, patch, now, { fields });
}

/** PUT: the resource replaced by the body (what it leaves out is cleared; `active` absent means true). */
export const replaceUser: ScimWrite = async (ctx, connection, userId, body, ifMatch) => {
  const input = readUser(body);
  return changeUser(ctx, connection, userId, ifMatch, () => input);
};

/** PATCH: the operations applied by scim-patch to the current resource, then written like a PUT of the result. */
export const patchUser: ScimWrite = async (ctx, connection, userId, body, ifMatch) => {
  const operations = readPatch(body);
  return changeUser(ctx, connection, userId, ifMatch, (current) => readUser(applyPatch(current, operations)));
};

/** RFC 7644 §3.5.2 through scim-patch; its refusals are 400s with the scimType they name. */
export function applyPatch(current: Resource, operations: ReturnType<typeof readPatch>): Resource {
  const { meta, ...rest } = current;
  const resource: ScimResource = {
    ...rest,
    schemas: Array.isArray(rest.schemas) ? rest.schemas.map(String) : [],
    // scim-patch stamps meta.lastModified; the result's meta is dropped (the server writes its own).
    meta: { created: new Date(0), lastModified: new Date(0) },
  };
  try {
    const { meta: _stamped, ...patched } = scimPatch(resource, operations, { mutateDocument: false });
    return { ...patched, meta };
  } catch (err) {
    const scimCode = err instanceof ScimPatchError ? err.scimCode : undefined;
    const scimType = scimCode === 'noTarget' ? 'noTarget' : scimCode === 'invalidValue' ? 'invalidValue' : 'invalidPath';
    throw new ScimError('validation_error', err instanceof Error ? err.message : 'Invalid PATCH operation', scimType);
  }
}

/** DELETE: deletes the account (its address is free again); never one holding an admin-tier role. */
export async function deleteUser(
  ctx: ServiceContext,
  connection: ScimConnectionRow,
  userId: string,
  ifMatch: string | undefined,
): Promise<void> {
  await withTransaction(ctx.db, async (trx) => {
    if (!(await lockUser(trx, userId))) throw USER_NOT_FOUND();
    const record = await findScimUser(trx, connection.id, userId);
    if (!record) throw USER_NOT_FOUND();
    assertVersion(userResource(record, ctx.config.baseUrl), ifMatch);
    await assertNotAdmin(trx, userId);
    // Recorded before the delete (same transaction): the event keeps the account's email and name (insertAuditEvents).
    await ctx.events.record(trx, { type: 'user.deleted', subjectId: userId, detail: { scim_connection_id: connection.id } });
    await deleteAccount(trx, userId);
  });
}

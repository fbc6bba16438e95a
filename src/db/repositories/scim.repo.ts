import type { Knex } from 'knex';
import type { DbOrTrx } from '..';
import { UUID_PATTERN } from '../../lib/ids';
import { touchLastUse } from '../last-use';
import { date, dateOrNull, hidden, same, type RecordOf, type RowOf } from '../rows';
import { table } from '../table';
import { userTable, type UserRecord, type UserRow } from './users.repo';

/**
 * SCIM 2.0 provisioning (CONTRACT §20, docs/scim.md): connections, what a connection knows of an account, groups,
 * their members and the roles they are mapped to. Filters arrive as a compiled condition tree (services/scim/filter.ts)
 * over a closed list of attributes, each mapped here to a fixed SQL expression; every value is a bound parameter.
 */

// ---------------------------------------------------------------------------------------------------------------
// Connections

export const scimConnections = table('scim_connections', {
  id: same<string>(),
  /** The SHA-256 of the connection's token, never shown. */
  tokenHash: hidden<string>(),
  name: same<string>(),
  description: same<string>(),
  createdBy: same<string | null>(),
  createdAt: date,
  lastUsedAt: dateOrNull,
});
export type ScimConnectionRow = RowOf<typeof scimConnections.columns>;

export const insertScimConnection = (
  db: DbOrTrx,
  c: { id: string; name: string; description: string; tokenHash: string; createdBy: string | null; now: Date },
) =>
  scimConnections.insert(db, {
    id: c.id,
    name: c.name,
    description: c.description,
    token_hash: c.tokenHash,
    created_by: c.createdBy,
    created_at: c.now,
  });

export const listScimConnections = (db: DbOrTrx) => scimConnections.list(db, {}, ['created_at', 'id']);

export const findScimConnection = async (db: DbOrTrx, id: string) => (UUID_PATTERN.test(id) ? scimConnections.find(db, { id }) : undefined);

/** The connection whose token has this SHA-256, with the stored hash for the caller's constant-time comparison. */
export async function findScimConnectionByTokenHash(
  db: DbOrTrx,
  tokenHash: string,
): Promise<{ connection: ScimConnectionRow; tokenHash: string } | undefined> {
  const row = await db('scim_connections').where({ token_hash: tokenHash }).first();
  return row ? { connection: scimConnections.toRow(row), tokenHash: row.token_hash } : undefined;
}

/** A new token hash (rotation): the old token stops matching at once. */
export const setScimConnectionTokenHash = async (db: DbOrTrx, id: string, tokenHash: string) =>
  UUID_PATTERN.test(id) ? scimConnections.update(db, { id }, { token_hash: tokenHash }) : undefined;

/** last_used_at, written at most once a minute per connection (db/last-use.ts). */
export async function touchScimConnection(db: DbOrTrx, id: string, now: Date): Promise<void> {
  await touchLastUse(db, 'scim_connections', { id }, now);
}

/** Deletes a connection; its groups, their memberships and mappings, and its externalIds go with it. */
export async function deleteScimConnection(db: DbOrTrx, id: string): Promise<ScimConnectionRow | undefined> {
  if (!UUID_PATTERN.test(id)) return undefined;
  const [row] = await db('scim_connections').where({ id }).delete().returning('*');
  return row ? scimConnections.toRow(row) : undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Compiled filters (built by services/scim/filter.ts)

export type ScimCompareOp = 'eq' | 'ne' | 'co' | 'sw' | 'ew' | 'gt' | 'ge' | 'lt' | 'le';

export type ScimCondition =
  | { kind: 'compare'; attribute: string; op: ScimCompareOp; value: string | boolean | Date | null; caseExact: boolean }
  | { kind: 'present'; attribute: string }
  | { kind: 'and' | 'or'; conditions: ScimCondition[] }
  | { kind: 'not'; condition: ScimCondition }
  /** Some element of a multi-valued attribute (`members[value eq "…"]`) matches the inner condition. */
  | { kind: 'some'; attribute: string; condition: ScimCondition }
  | { kind: 'constant'; value: boolean };

interface MultiValued {
  /** The rows of the attribute's elements, correlated with the resource (`null`: a single element inline). */
  from: string | null;
  /** Sub-attribute -> SQL expression over those rows. */
  columns: Record<string, string>;
  /** The attribute's name, while its sub-attributes are compiled (the prefilters' key, `emails.value`). */
  name?: string;
}

interface Columns {
  /** Attribute path -> SQL expression (fixed strings, never input). */
  single: Record<string, string>;
  multi: Record<string, MultiValued>;
  /**
   * Index prefilters: for a string comparison on these attributes (`eq`, `co`, `sw`, `ew`, case-insensitive), a
   * condition that every match also meets and that a trigram index answers. It is AND-ed before the exact condition,
   * which re-checks the candidates, so the result is the same with or without it; only the plan changes.
   */
  prefilter?: Record<string, (pattern: string, connectionId: string) => [string, Knex.RawBinding[]]>;
}

/** The substring pattern of a trigram prefilter (trigram indexes need at least 3 characters to narrow anything). */
const substring = (value: string) => `%${likeEscape(value)}%`;

/**
 * The accounts' search expression that `users_search_trgm_idx` (pg_trgm) indexes: a value found in the email or a
 * name is found in it, whatever the case.
 */
const USER_SEARCH = `(u.email || ' ' || u.first_name || ' ' || u.last_name) ilike ? escape '\\'`;
const byUserSearch = (pattern: string): [string, Knex.RawBinding[]] => [USER_SEARCH, [pattern]];

/** The accounts whose email or names contain the pattern, and those whose value kept by the connection does. */
function accountOrKept(column: 'user_name' | 'display_name', pattern: string, connectionId: string): [string, Knex.RawBinding[]] {
  return [
    `u.id in (select x.id from users x where (x.email || ' ' || x.first_name || ' ' || x.last_name) ilike ? escape '\\'
              union all
              select y.user_id from scim_users y where y.connection_id = ? and lower(y.${column}) like lower(?) escape '\\')`,
    [pattern, connectionId, pattern],
  ];
}

const USER_COLUMNS: Columns = {
  single: {
    id: 'u.id::text',
    userName: 'coalesce(su.user_name, u.email)',
    // The two sides of userName, for `userName eq` (services/scim/filter.ts): each answered by an index.
    accountEmail: 'u.email',
    directoryUserName: 'su.user_name',
    externalId: 'su.external_id',
    displayName: `coalesce(su.display_name, nullif(trim(u.first_name || ' ' || u.last_name), ''))`,
    'name.givenName': `nullif(u.first_name, '')`,
    'name.familyName': `nullif(u.last_name, '')`,
    'name.formatted': `nullif(trim(u.first_name || ' ' || u.last_name), '')`,
    active: 'u.is_active',
    'meta.created': 'u.created_at',
    'meta.lastModified': 'greatest(u.updated_at, su.updated_at)',
  },
  // An account has one address: `emails` is that one element.
  multi: { emails: { from: null, columns: { value: 'u.email', type: `'work'`, primary: 'true' } } },
  prefilter: {
    'name.givenName': byUserSearch,
    'name.familyName': byUserSearch,
    'name.formatted': byUserSearch,
    'emails.value': byUserSearch,
    // userName is the connection's own userName when it kept one, else the email: the candidates are the accounts
    // whose email or names contain the value, and those whose kept userName does (scim_users_user_name_trgm_idx).
    userName: (pattern, connectionId) => accountOrKept('user_name', pattern, connectionId),
    // displayName likewise: the connection's own displayName (scim_users_display_name_trgm_idx), else the names.
    displayName: (pattern, connectionId) => accountOrKept('display_name', pattern, connectionId),
  },
};

const GROUP_COLUMNS: Columns = {
  single: {
    id: 'g.id::text',
    displayName: 'g.display_name',
    externalId: 'g.external_id',
    'meta.created': 'g.created_at',
    'meta.lastModified': 'g.updated_at',
  },
  multi: { members: { from: 'scim_group_members m where m.group_id = g.id', columns: { value: 'm.user_id::text' } } },
};

function likeEscape(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** One comparison as SQL with bindings; case-insensitive strings compare lower-cased (RFC 7644 §3.4.2.2). */
function compareSql(expr: string, c: Extract<ScimCondition, { kind: 'compare' }>): [string, Knex.RawBinding[]] {
  if (c.value === null) return c.op === 'ne' ? [`${expr} is not null`, []] : [`${expr} is null`, []];
  const folded = typeof c.value === 'string' && !c.caseExact;
  const lhs = folded ? `lower(${expr})` : expr;
  const value = typeof c.value === 'string' && !c.caseExact ? c.value.toLowerCase() : c.value;
  switch (c.op) {
    case 'eq':
      return [`${lhs} = ?`, [value]];
    case 'ne':
      return [`${lhs} is distinct from ?`, [value]];
    case 'co':
      return [`${lhs} like ? escape '\\'`, [`%${likeEscape(String(value))}%`]];
    case 'sw':
      return [`${lhs} like ? escape '\\'`, [`${likeEscape(String(value))}%`]];
    case 'ew':
      return [`${lhs} like ? escape '\\'`, [`%${likeEscape(String(value))}`]];
    case 'gt':
      return [`${lhs} > ?`, [value]];
    case 'ge':
      return [`${lhs} >= ?`, [value]];
    case 'lt':
      return [`${lhs} < ?`, [value]];
    case 'le':
      return [`${lhs} <= ?`, [value]];
  }
}

/** The condition as one SQL boolean expression with its bindings, in `columns`' vocabulary. */
function conditionSql(cond: ScimCondition, columns: Columns, connectionId: string, inner?: MultiValued): [string, Knex.RawBinding[]] {
  const exprOf = (attribute: string): string => {
    const expr = inner ? inner.columns[attribute] : columns.single[attribute];
    if (!expr) throw new Error(`SCIM filter attribute ${attribute} has no column`);
    return expr;
  };
  switch (cond.kind) {
    case 'constant':
      return [cond.value ? 'true' : 'false', []];
    case 'compare': {
      const exact = compareSql(exprOf(cond.attribute), cond);
      const prefilter = columns.prefilter?.[inner ? `${inner.name ?? ''}.${cond.attribute}` : cond.attribute];
      if (!prefilter || typeof cond.value !== 'string' || cond.caseExact || !['eq', 'co', 'sw', 'ew'].includes(cond.op)) return exact;
      const [pre, preBindings] = prefilter(substring(cond.value), connectionId);
      return [`(${pre} and ${exact[0]})`, [...preBindings, ...exact[1]]];
    }
    case 'present':
      return [`${exprOf(cond.attribute)} is not null`, []];
    case 'not': {
      const [sql, bindings] = conditionSql(cond.condition, columns, connectionId, inner);
      return [`not coalesce(${sql}, false)`, bindings];
    }
    case 'and':
    case 'or': {
      const parts = cond.conditions.map((c) => conditionSql(c, columns, connectionId, inner));
      return [`(${parts.map(([sql]) => sql).join(` ${cond.kind} `)})`, parts.flatMap(([, b]) => b)];
    }
    case 'some': {
      const multi = columns.multi[cond.attribute];
      if (!multi || inner) throw new Error(`SCIM filter attribute ${cond.attribute} is not multi-valued`);
      const [sql, bindings] = conditionSql(cond.condition, columns, connectionId, { ...multi, name: cond.attribute });
      return multi.from === null ? [sql, bindings] : [`exists (select 1 from ${multi.from} and (${sql}))`, bindings];
    }
  }
}

function applyCondition(q: Knex.QueryBuilder, cond: ScimCondition | undefined, columns: Columns, connectionId: string): void {
  if (!cond) return;
  // A missing attribute compares as SQL NULL, which WHERE, AND and OR already treat as no match (three-valued logic
  // agrees with false there); only NOT needs it made false first (`not coalesce(…, false)`). No coalesce around the
  // whole condition, so that `userName eq` and `externalId eq` stay index lookups.
  const [sql, bindings] = conditionSql(cond, columns, connectionId);
  q.whereRaw(sql, bindings);
}

// ---------------------------------------------------------------------------------------------------------------
// Users: accounts as a connection sees them

export interface ScimUserRecord {
  user: UserRow;
  /** The connection's own facts about the account; null when it has none (an account it never provisioned). */
  externalId: string | null;
  /** The directory's userName when it is not an email address (the account's email is then its primary email). */
  userName: string | null;
  displayName: string | null;
  enterprise: Record<string, unknown> | null;
  scimUpdatedAt: Date | null;
  /** This connection's groups the account is a member of (the read-only `groups` attribute, RFC 7643 §4.1.2). */
  groups: Array<{ id: string; displayName: string }>;
}

/**
 * The columns of usersOf: the account, what the connection knows of it (null where it knows nothing: the join found
 * no row), and the account's groups of the connection. pg parses json and jsonb, so both arrive as values.
 */
interface ScimUserColumns extends UserRecord {
  scim_external_id: string | null;
  scim_user_name: string | null;
  scim_display_name: string | null;
  scim_enterprise: Record<string, unknown> | null;
  scim_updated_at: Date | null;
  scim_groups: ScimUserRecord['groups'];
}

function toScimUser(r: ScimUserColumns): ScimUserRecord {
  return {
    user: userTable.toRow(r),
    externalId: r.scim_external_id,
    userName: r.scim_user_name,
    displayName: r.scim_display_name,
    enterprise: r.scim_enterprise,
    scimUpdatedAt: r.scim_updated_at ? new Date(r.scim_updated_at) : null,
    groups: r.scim_groups,
  };
}

function usersOf(db: DbOrTrx, connectionId: string): Knex.QueryBuilder<ScimUserColumns, ScimUserColumns[]> {
  return db({ u: 'users' })
    .leftJoin({ su: 'scim_users' }, (j) => j.on('su.user_id', '=', 'u.id').andOn('su.connection_id', '=', db.raw('?', [connectionId])))
    .select(
      'u.*',
      'su.external_id as scim_external_id',
      'su.user_name as scim_user_name',
      'su.display_name as scim_display_name',
      'su.enterprise as scim_enterprise',
      'su.updated_at as scim_updated_at',
      db.raw(
        `(select coalesce(json_agg(json_build_object('id', sg.id, 'displayName', sg.display_name) order by sg.display_name, sg.id), '[]'::json)
            from scim_group_members sgm join scim_groups sg on sg.id = sgm.group_id
           where sgm.user_id = u.id and sg.connection_id = ?) as scim_groups`,
        [connectionId],
      ),
    );
}

export async function findScimUser(db: DbOrTrx, connectionId: string, userId: string): Promise<ScimUserRecord | undefined> {
  if (!UUID_PATTERN.test(userId)) return undefined;
  const row = await usersOf(db, connectionId).where('u.id', userId).first();
  return row ? toScimUser(row) : undefined;
}

/** A page of accounts matching the filter (oldest first, a stable order for startIndex), and how many match. */
export async function listScimUsers(
  db: DbOrTrx,
  connectionId: string,
  query: { filter?: ScimCondition; offset: number; limit: number },
): Promise<{ rows: ScimUserRecord[]; total: number }> {
  const counted = usersOf(db, connectionId).clearSelect();
  applyCondition(counted, query.filter, USER_COLUMNS, connectionId);
  const [{ count }] = await counted.count<[{ count: string }]>({ count: '*' });
  if (query.limit === 0) return { rows: [], total: Number(count) };
  const q = usersOf(db, connectionId);
  applyCondition(q, query.filter, USER_COLUMNS, connectionId);
  const rows = await q
    .orderBy([{ column: 'u.created_at' }, { column: 'u.id' }])
    .offset(query.offset)
    .limit(query.limit);
  return { rows: rows.map(toScimUser), total: Number(count) };
}

/** Writes what the connection knows of the account (externalId, displayName, enterprise extension). */
export async function upsertScimUser(
  db: DbOrTrx,
  row: {
    connectionId: string;
    userId: string;
    externalId: string | null;
    userName: string | null;
    displayName: string | null;
    enterprise: Record<string, unknown> | null;
    now: Date;
  },
): Promise<void> {
  await db('scim_users')
    .insert({
      connection_id: row.connectionId,
      user_id: row.userId,
      external_id: row.externalId,
      user_name: row.userName,
      display_name: row.displayName,
      enterprise: row.enterprise === null ? null : JSON.stringify(row.enterprise),
      created_at: row.now,
      updated_at: row.now,
    })
    .onConflict(['connection_id', 'user_id'])
    .merge(['external_id', 'user_name', 'display_name', 'enterprise', 'updated_at']);
}

/** Deletes the account (its sessions, tokens, factors, links and memberships go with it by cascade). */
export async function deleteAccount(db: DbOrTrx, userId: string): Promise<boolean> {
  return (await db('users').where({ id: userId }).delete()) > 0;
}

// ---------------------------------------------------------------------------------------------------------------
// Groups

export const scimGroups = table('scim_groups', {
  id: same<string>(),
  connectionId: same<string>(),
  displayName: same<string>(),
  externalId: same<string | null>(),
  createdAt: date,
  updatedAt: date,
});
export type ScimGroupRow = RowOf<typeof scimGroups.columns>;

/** A group's members and the roles it is mapped to: a pair of ids a row. */
export interface ScimGroupMemberRecord {
  group_id: string;
  user_id: string;
}

export interface ScimGroupRoleRecord {
  group_id: string;
  role_id: string;
}

export const insertScimGroup = (
  db: DbOrTrx,
  g: { id: string; connectionId: string; displayName: string; externalId: string | null; now: Date },
) =>
  scimGroups.insert(db, {
    id: g.id,
    connection_id: g.connectionId,
    display_name: g.displayName,
    external_id: g.externalId,
    created_at: g.now,
    updated_at: g.now,
  });

/** A group of the connection; `lock` takes its row for the rest of the transaction (the first lock of every group change). */
export async function findScimGroup(
  db: DbOrTrx,
  connectionId: string | null,
  groupId: string,
  lock = false,
): Promise<ScimGroupRow | undefined> {
  if (!UUID_PATTERN.test(groupId)) return undefined;
  const q = db('scim_groups').where({ id: groupId });
  if (connectionId !== null) q.where({ connection_id: connectionId });
  if (lock) q.forUpdate();
  const row = await q.first();
  return row ? scimGroups.toRow(row) : undefined;
}

export async function listScimGroups(
  db: DbOrTrx,
  connectionId: string | null,
  query: { filter?: ScimCondition; offset: number; limit: number },
): Promise<{ rows: ScimGroupRow[]; total: number }> {
  const base = () => {
    const q = db({ g: 'scim_groups' });
    if (connectionId !== null) q.where('g.connection_id', connectionId);
    applyCondition(q, query.filter, GROUP_COLUMNS, connectionId ?? '');
    return q;
  };
  const [{ count }] = await base().count<[{ count: string }]>({ count: '*' });
  if (query.limit === 0) return { rows: [], total: Number(count) };
  const rows: RecordOf<typeof scimGroups.columns>[] = await base()
    .select('g.*')
    .orderBy([{ column: 'g.created_at' }, { column: 'g.id' }])
    .offset(query.offset)
    .limit(query.limit);
  return { rows: rows.map(scimGroups.toRow), total: Number(count) };
}

export async function updateScimGroup(
  db: DbOrTrx,
  id: string,
  patch: { displayName: string; externalId: string | null },
  now: Date,
): Promise<void> {
  await db('scim_groups').where({ id }).update({ display_name: patch.displayName, external_id: patch.externalId, updated_at: now });
}

export async function deleteScimGroup(db: DbOrTrx, id: string): Promise<void> {
  await db('scim_groups').where({ id }).delete();
}

/** Member user ids of each group, in id order. */
export async function listScimGroupMembers(db: DbOrTrx, groupIds: readonly string[]): Promise<Map<string, string[]>> {
  const members = new Map<string, string[]>(groupIds.map((id) => [id, []]));
  if (groupIds.length === 0) return members;
  const rows = await db('scim_group_members').whereIn('group_id', groupIds).orderBy(['group_id', 'user_id']).select('group_id', 'user_id');
  for (const r of rows) members.get(r.group_id)?.push(r.user_id);
  return members;
}

/** Which of these ids are accounts (members must be). */
export async function existingUserIds(db: DbOrTrx, ids: readonly string[]): Promise<Set<string>> {
  const valid = ids.filter((id) => UUID_PATTERN.test(id));
  if (valid.length === 0) return new Set();
  const rows = await db('users').whereIn('id', valid).select('id');
  return new Set(rows.map((r) => r.id));
}

/** Adds members (already present: nothing) in user id order, so concurrent changes take the same locks in the same order. */
export async function addScimGroupMembers(db: DbOrTrx, groupId: string, userIds: readonly string[]): Promise<void> {
  if (userIds.length === 0) return;
  const sorted = [...userIds].sort();
  await db('scim_group_members')
    .insert(sorted.map((user_id) => ({ group_id: groupId, user_id })))
    .onConflict(['group_id', 'user_id'])
    .ignore();
}

export async function removeScimGroupMembers(db: DbOrTrx, groupId: string, userIds: readonly string[]): Promise<void> {
  if (userIds.length === 0) return;
  await db('scim_group_members').where({ group_id: groupId }).whereIn('user_id', userIds).delete();
}

/** The roles a group is mapped to. */
export async function listScimGroupRoleIds(db: DbOrTrx, groupId: string): Promise<string[]> {
  const rows = await db('scim_group_roles').where({ group_id: groupId }).orderBy('role_id').select('role_id');
  return rows.map((r) => r.role_id);
}

/** Replaces a group's role mapping. */
export async function setScimGroupRoles(db: DbOrTrx, groupId: string, roleIds: readonly string[]): Promise<void> {
  await db('scim_group_roles').where({ group_id: groupId }).delete();
  if (roleIds.length) await db('scim_group_roles').insert([...roleIds].sort().map((role_id) => ({ group_id: groupId, role_id })));
}

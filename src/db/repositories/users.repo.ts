import type { Knex } from 'knex';
import { preparedRows, type DbOrTrx } from '..';
import { UUID_PATTERN } from '../../lib/ids';
import { date, dateOrNull, same, type RecordOf, type RowOf } from '../rows';
import { table } from '../table';

export const userTable = table('users', {
  id: same<string>(),
  email: same<string>(),
  firstName: same<string>(),
  lastName: same<string>(),
  passwordHash: same<string | null>(),
  isActive: same<boolean>(),
  emailVerified: same<boolean>(),
  createdAt: date,
  updatedAt: date,
  lastLoginAt: dateOrNull,
  /** An invitation not yet accepted: when its link stops working (null: not invited, or accepted). */
  invitationExpiresAt: dateOrNull,
});
export type UserRow = RowOf<typeof userTable.columns>;
/** A users row as pg returns it (other repositories' statements that select `u.*` extend it). */
export type UserRecord = RecordOf<typeof userTable.columns>;

export const findUserById = async (db: DbOrTrx, id: string) => (UUID_PATTERN.test(id) ? userTable.find(db, { id }) : undefined);

/** What the password step of sign-in needs: the account and which second factors it has. */
export interface SignInAccount {
  user: UserRow;
  /** A confirmed TOTP (a pending enrolment does not count). */
  totp: boolean;
  passkeys: number;
  recoveryCodesLeft: number;
}

/**
 * The account behind a sign-in and its second factors in one prepared statement (issue 10: a login is one bcrypt
 * hash and as few round trips as possible). The factor columns are the ones loadFactors (services/mfa) reads.
 */
export async function findSignInAccount(db: DbOrTrx, email: string): Promise<SignInAccount | undefined> {
  const [row] = await preparedRows<UserRecord & { has_totp: boolean; passkeys: number; recovery_codes_left: number }>(
    db,
    'sso_sign_in_account_1',
    `select u.id, u.email, u.first_name, u.last_name, u.password_hash, u.is_active, u.email_verified, u.created_at,
            u.updated_at, u.last_login_at,
            exists (select 1 from mfa_totp t where t.user_id = u.id and t.confirmed_at is not null) as has_totp,
            (select count(*) from webauthn_credentials w where w.user_id = u.id)::int as passkeys,
            (select count(*) from mfa_recovery_codes r where r.user_id = u.id and r.used_at is null)::int as recovery_codes_left
       from users u where u.email = $1`,
    [email],
  );
  if (!row) return undefined;
  return {
    user: userTable.toRow(row),
    totp: row.has_totp === true,
    passkeys: Number(row.passkeys),
    recoveryCodesLeft: Number(row.recovery_codes_left),
  };
}

export const findUserByEmail = (db: DbOrTrx, email: string) => userTable.find(db, { email });

export const insertUser = (
  db: DbOrTrx,
  user: {
    id: string;
    email: string;
    firstName: string;
    lastName: string;
    passwordHash: string | null;
    emailVerified?: boolean;
    invitationExpiresAt?: Date;
    now: Date;
  },
) =>
  userTable.insert(db, {
    id: user.id,
    email: user.email,
    first_name: user.firstName,
    last_name: user.lastName,
    password_hash: user.passwordHash,
    email_verified: user.emailVerified ?? false,
    invitation_expires_at: user.invitationExpiresAt ?? null,
    created_at: user.now,
    updated_at: user.now,
  });

export const updateUser = (
  db: DbOrTrx,
  id: string,
  patch: Partial<{
    firstName: string;
    lastName: string;
    email: string;
    passwordHash: string;
    isActive: boolean;
    emailVerified: boolean;
    lastLoginAt: Date;
    invitationExpiresAt: Date | null;
  }>,
  now: Date,
) => userTable.update(db, { id }, { ...userTable.toRecord(patch), updated_at: now });

/**
 * Locks a user row for the rest of the transaction and returns it. The first lock of the email-link flows, so that
 * they and the admin update (which writes the user row first) take users before email_tokens and sessions.
 */
export async function lockUser(db: DbOrTrx, id: string): Promise<UserRow | undefined> {
  const row = await db('users').where({ id }).forNoKeyUpdate().first();
  return row ? userTable.toRow(row) : undefined;
}

/** `%`, `_` and `\` match literally in a search term. */
function likePattern(term: string): string {
  return `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * The user search (case-insensitive substring of the email, the first name, the last name or the full name). The
 * first condition is implied by the others (each of them is a substring of "email first last") and is the one the
 * pg_trgm index `users_search_trgm_idx` answers; the exact conditions then re-check its candidates.
 */
function whereSearch(q: Knex.QueryBuilder, alias: string, term: string): void {
  const pattern = likePattern(term);
  const col = (c: string) => `${alias}.${c}`;
  q.whereRaw(`(${col('email')} || ' ' || ${col('first_name')} || ' ' || ${col('last_name')}) ilike ?`, [pattern]);
  q.where((w) =>
    w
      .whereILike(col('email'), pattern)
      .orWhereILike(col('first_name'), pattern)
      .orWhereILike(col('last_name'), pattern)
      .orWhereRaw(`(${col('first_name')} || ' ' || ${col('last_name')}) ilike ?`, [pattern]),
  );
}

/**
 * A page of users, newest first (created_at, then id, both descending), with the total matching `search`. The REST
 * API's page/offset contract (CONTRACT §6): the total is exact (a count of at most the table; the search narrows it
 * through the trigram index).
 */
export async function listUsers(
  db: DbOrTrx,
  query: UserFilter & { limit: number; offset: number },
): Promise<{ users: UserRow[]; total: number }> {
  const matching = () => filteredUsers(db, query);
  const [rows, count] = await Promise.all([
    matching()
      .select('u.*')
      .orderBy([
        { column: 'u.created_at', order: 'desc' },
        { column: 'u.id', order: 'desc' },
      ])
      .limit(query.limit)
      .offset(query.offset),
    matching().count<{ count: string }[]>('* as count').first(),
  ]);
  return { users: rows.map(userTable.toRow), total: Number(count?.count ?? 0) };
}

export async function countUsers(db: DbOrTrx): Promise<{ total: number; active: number }> {
  const row = await db('users').first<{ total: string; active: string } | undefined>(
    db.raw('count(*) as total'),
    db.raw('count(*) filter (where is_active) as active'),
  );
  return { total: Number(row?.total ?? 0), active: Number(row?.active ?? 0) };
}

/** The console's user list filters (CONTRACT §14). */
export interface UserFilter {
  search?: string;
  status?: 'active' | 'inactive';
  /** Only holders of an active global role among these (the admin tier). */
  holdingRoles?: readonly string[];
}

export interface UserSearch extends UserFilter {
  limit: number;
  /** Keyset cursor: only users after this one in the list order (older); the next page. */
  afterId?: string;
  /** Keyset cursor: only users before this one in the list order (newer); the previous page. */
  beforeId?: string;
}

function filteredUsers(db: DbOrTrx, filter: UserFilter): Knex.QueryBuilder<UserRecord, UserRecord[]> {
  const q = db<UserRecord>('users as u');
  if (filter.search) whereSearch(q, 'u', filter.search);
  if (filter.status) q.where('u.is_active', filter.status === 'active');
  if (filter.holdingRoles?.length) {
    const names = filter.holdingRoles;
    q.whereExists((e) =>
      e
        .select(db.raw('1'))
        .from('user_roles as ur')
        .join('roles as ro', 'ro.id', 'ur.role_id')
        .whereRaw('ur.user_id = u.id')
        .whereNull('ro.application')
        .where('ro.is_active', true)
        .whereIn('ro.name', names),
    );
  }
  return q;
}

/**
 * A page of users for the console, newest first, by keyset on (created_at, id) (index users_created_at_id_idx): no
 * offset, so page 2,000 costs what page 1 costs, and rows that tie on created_at are neither skipped nor repeated.
 * Returns up to `limit + 1` rows in list order: the extra row says whether another page follows in the direction
 * asked (after `afterId`, or before `beforeId`; from the top without either). A cursor that names no user gives
 * no rows.
 */
export async function searchUsers(db: DbOrTrx, query: UserSearch): Promise<UserRow[]> {
  const q = filteredUsers(db, query).select('u.*');
  const backwards = query.beforeId !== undefined;
  const cursor = query.beforeId ?? query.afterId;
  if (cursor !== undefined) {
    if (!UUID_PATTERN.test(cursor)) return [];
    q.whereRaw(`(u.created_at, u.id) ${backwards ? '>' : '<'} ((select c.created_at from users c where c.id = ?), ?::uuid)`, [
      cursor,
      cursor,
    ]);
  }
  const order = backwards ? 'asc' : 'desc';
  const rows = await q
    .orderBy([
      { column: 'u.created_at', order },
      { column: 'u.id', order },
    ])
    .limit(query.limit + 1);
  const users = rows.map(userTable.toRow);
  return backwards ? users.reverse() : users;
}

/**
 * How many users match, counting no further than `cap`: the exact number when it is at most `cap`, else `cap + 1`
 * ("more than cap"). Bounded work whatever the table holds.
 */
export async function countUsersCapped(db: DbOrTrx, filter: UserFilter, cap: number): Promise<number> {
  const inner = filteredUsers(db, filter)
    .select(db.raw('1'))
    .limit(cap + 1);
  const [row] = await db.count<{ count: string }[]>('* as count').from(inner.as('m'));
  return Number(row?.count ?? 0);
}

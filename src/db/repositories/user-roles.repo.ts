import type { DbOrTrx } from '..';
import type { PrincipalRole } from './principal.repo';
import { userTable, type UserRow } from './users.repo';

/** Returns false when the user already held the role (assignment is idempotent). */
export async function assignRoleToUser(db: DbOrTrx, userId: string, roleId: string, now: Date): Promise<boolean> {
  const rows = await db('user_roles')
    .insert({ user_id: userId, role_id: roleId, created_at: now })
    .onConflict(['user_id', 'role_id'])
    .ignore()
    .returning('role_id');
  return rows.length > 0;
}

/** Returns whether the user held the role. */
export async function removeRoleFromUser(db: DbOrTrx, userId: string, roleId: string): Promise<boolean> {
  const n = await db('user_roles').where({ user_id: userId, role_id: roleId }).delete();
  return n > 0;
}

/** Active roles of many users at once (user listings), as `{ id, name, application }`. */
export async function listActiveRolesOfUsers(db: DbOrTrx, userIds: string[]): Promise<Map<string, PrincipalRole[]>> {
  const byUser = new Map<string, PrincipalRole[]>(userIds.map((id) => [id, []]));
  if (userIds.length === 0) return byUser;
  const rows: Array<{ user_id: string; id: string; name: string; application: string | null }> = await db('user_roles as ur')
    .join('roles as ro', 'ro.id', 'ur.role_id')
    .whereIn('ur.user_id', userIds)
    .where('ro.is_active', true)
    .orderByRaw('ro.application nulls first, ro.name')
    .select('ur.user_id', 'ro.id', 'ro.name', 'ro.application');
  for (const r of rows) byUser.get(r.user_id)?.push({ id: r.id, name: r.name, application: r.application });
  return byUser;
}

/** Active users holding any of the given active global roles. */
function adminUsersQuery(db: DbOrTrx, roleNames: readonly string[]) {
  return db('users as u')
    .where('u.is_active', true)
    .whereExists(
      db('user_roles as ur')
        .join('roles as ro', 'ro.id', 'ur.role_id')
        .whereRaw('ur.user_id = u.id')
        .whereIn('ro.name', roleNames)
        .whereNull('ro.application')
        .where('ro.is_active', true)
        .select(db.raw('1')),
    );
}

export async function listUsersWithGlobalRoles(db: DbOrTrx, roleNames: readonly string[]): Promise<UserRow[]> {
  const rows = await adminUsersQuery(db, roleNames).select('u.*').orderBy('u.email');
  return rows.map(userTable.toRow);
}

export async function countUsersWithGlobalRoles(
  db: DbOrTrx,
  roleNames: readonly string[],
  filter: { exceptUserId?: string } = {},
): Promise<number> {
  const q = adminUsersQuery(db, roleNames);
  if (filter.exceptUserId) q.whereNot('u.id', filter.exceptUserId);
  const row = await q.count<{ count: string }[]>('* as count').first();
  return Number(row?.count ?? 0);
}

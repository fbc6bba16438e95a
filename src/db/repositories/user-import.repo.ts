import type { DbOrTrx } from '..';

/** Bulk import and export of accounts (docs/passwords.md, "Moving users in"). */

export interface ImportedUser {
  id: string;
  email: string;
  firstName: string;
  lastName: string;
  emailVerified: boolean;
  passwordHash: string | null;
  roleIds: string[];
}

const CHUNK = 500;

/** The addresses of `emails` that already have an account (lower-case, as stored). */
export async function findTakenEmails(db: DbOrTrx, emails: readonly string[]): Promise<Set<string>> {
  const taken = new Set<string>();
  for (let i = 0; i < emails.length; i += CHUNK) {
    const rows = await db('users')
      .whereIn('email', emails.slice(i, i + CHUNK))
      .select<Array<{ email: string }>>('email');
    for (const r of rows) taken.add(r.email);
  }
  return taken;
}

/** Inserts every account and its roles in chunks, inside the caller's transaction (all or nothing). */
export async function insertImportedUsers(trx: DbOrTrx, users: readonly ImportedUser[], now: Date): Promise<void> {
  for (let i = 0; i < users.length; i += CHUNK) {
    const chunk = users.slice(i, i + CHUNK);
    await trx('users').insert(
      chunk.map((u) => ({
        id: u.id,
        email: u.email,
        first_name: u.firstName,
        last_name: u.lastName,
        password_hash: u.passwordHash,
        email_verified: u.emailVerified,
        created_at: now,
        updated_at: now,
      })),
    );
    const grants = chunk.flatMap((u) => u.roleIds.map((roleId) => ({ user_id: u.id, role_id: roleId, created_at: now })));
    if (grants.length > 0) await trx('user_roles').insert(grants).onConflict(['user_id', 'role_id']).ignore();
  }
}

export interface ExportedUser {
  id: string;
  email: string;
  firstName: string;
  lastName: string;
  emailVerified: boolean;
  isActive: boolean;
  roles: string[];
  createdAt: Date;
  lastLoginAt: Date | null;
}

interface ExportColumns {
  id: string;
  email: string;
  first_name: string;
  last_name: string;
  email_verified: boolean;
  is_active: boolean;
  roles: string[];
  created_at: Date;
  last_login_at: Date | null;
}

/** One page of accounts in id order after `afterId` (keyset pagination), with their active global and app roles' names. */
export async function listUsersForExport(db: DbOrTrx, afterId: string | null, limit: number): Promise<ExportedUser[]> {
  const result = await db.raw<{ rows: ExportColumns[] }>(
    `select u.id, u.email, u.first_name, u.last_name, u.email_verified, u.is_active, u.created_at, u.last_login_at,
            coalesce((select array_agg(r.name order by r.name) from user_roles ur join roles r on r.id = ur.role_id
                       where ur.user_id = u.id), '{}') as roles
       from users u
      where (:afterId::uuid is null or u.id > :afterId::uuid)
      order by u.id
      limit :limit`,
    { afterId, limit },
  );
  return result.rows.map((r) => ({
    id: r.id,
    email: r.email,
    firstName: r.first_name,
    lastName: r.last_name,
    emailVerified: r.email_verified,
    isActive: r.is_active,
    roles: r.roles,
    createdAt: new Date(r.created_at),
    lastLoginAt: r.last_login_at ? new Date(r.last_login_at) : null,
  }));
}

import { randomUUID } from 'node:crypto';
import { withTransaction } from '../db';
import { countUsersWithGlobalRoles } from '../db/repositories/user-roles.repo';
import { findUserByEmail, insertUser, updateUser } from '../db/repositories/users.repo';
import { normalizeEmail } from './auth.service';
import type { ServiceContext } from './context';

/**
 * Creates a verified, active super_admin, or promotes the existing account with that email (CONTRACT §1).
 * `password` replaces an existing account's password only when `resetPassword` is set (the CLI); the boot-time
 * bootstrap never overwrites a password the admin may have changed since.
 */
export async function ensureSuperAdmin(
  ctx: ServiceContext,
  input: { email: string; password: string; resetPassword?: boolean },
): Promise<{ userId: string; created: boolean }> {
  const email = normalizeEmail(input.email);
  const now = ctx.clock.now();
  const existing = await findUserByEmail(ctx.db, email);
  const passwordHash = !existing || input.resetPassword ? await ctx.passwords.hash(input.password) : undefined;
  return withTransaction(ctx.db, async (trx) => {
    let userId: string;
    if (existing) {
      userId = existing.id;
      await updateUser(trx, userId, { isActive: true, emailVerified: true, ...(passwordHash ? { passwordHash } : {}) }, now);
    } else {
      const [localPart] = email.split('@');
      const user = await insertUser(trx, {
        id: randomUUID(),
        email,
        firstName: 'Admin',
        lastName: localPart === 'admin' ? '' : (localPart ?? ''),
        passwordHash: passwordHash!,
        emailVerified: true,
        now,
      });
      userId = user.id;
    }
    const role = await trx('roles').where({ name: 'super_admin' }).whereNull('application').first('id');
    await trx('user_roles').insert({ user_id: userId, role_id: role.id, created_at: now }).onConflict(['user_id', 'role_id']).ignore();
    return { userId, created: !existing };
  });
}

export async function countSuperAdmins(ctx: ServiceContext): Promise<number> {
  return countUsersWithGlobalRoles(ctx.db, ['super_admin']);
}

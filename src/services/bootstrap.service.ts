import { randomUUID } from 'node:crypto';
import { withTransaction } from '../db';
import { revokeSessionsOfUser } from '../db/repositories/sessions.repo';
import { countUsersWithGlobalRoles } from '../db/repositories/user-roles.repo';
import { findUserByEmail, insertUser, updateUser } from '../db/repositories/users.repo';
import { normalizeEmail } from './auth.service';
import type { ServiceContext } from './context';

/**
 * Creates a verified, active super_admin. The boot-time bootstrap does only that (CONTRACT §1: "if no user with that
 * email exists"): an existing account is left alone, because it may be one that anybody self-registered with that
 * address (unverified, with their own password) or a bootstrap admin deliberately deactivated since. Only the CLI
 * (`resetPassword`, an operator's explicit act) promotes an existing account; it replaces its password and signs
 * out every session it had.
 */
export async function ensureSuperAdmin(
  ctx: ServiceContext,
  input: { email: string; password: string; resetPassword?: boolean },
): Promise<{ userId: string; created: boolean }> {
  const email = normalizeEmail(input.email);
  const now = ctx.clock.now();
  const existing = await findUserByEmail(ctx.db, email);
  if (existing && !input.resetPassword) return { userId: existing.id, created: false };
  const passwordHash = await ctx.passwords.hash(input.password);
  return withTransaction(ctx.db, async (trx) => {
    let userId: string;
    if (existing) {
      userId = existing.id;
      await updateUser(trx, userId, { isActive: true, emailVerified: true, passwordHash }, now);
      // Whoever held a session under the old password must not inherit super_admin through it.
      await revokeSessionsOfUser(trx, userId, now);
    } else {
      const [localPart] = email.split('@');
      const user = await insertUser(trx, {
        id: randomUUID(),
        email,
        firstName: 'Admin',
        lastName: localPart === 'admin' ? '' : (localPart ?? ''),
        passwordHash,
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

import { randomUUID } from 'node:crypto';
import { withTransaction, type DbOrTrx } from '../db';
import { isUniqueViolation } from '../db/pg-errors';
import { revokeSessionsOfUser } from '../db/repositories/sessions.repo';
import { findRoleByName } from '../db/repositories/roles.repo';
import { assignRoleToUser, countUsersWithGlobalRoles } from '../db/repositories/user-roles.repo';
import { findUserByEmail, insertUser, lockUser, updateUser } from '../db/repositories/users.repo';
import { normalizeEmail } from './auth.service';
import type { ServiceContext } from './context';
import { assertPasswordAllowed } from './password-policy';
import { anyFactorRemoved, removeEveryFactor, type RemovedFactors } from './mfa/factor-reset.service';
import { mailFactorsReset } from './mfa/notifications';

/**
 * Creates a verified, active super_admin, or (CLI only) promotes the account with that email.
 *
 * At boot (no `resetPassword`, CONTRACT §8) the account is only ever *created*: an existing account with that
 * address, whatever its state, is left exactly as it is and a warning is logged. Otherwise anyone who can get an
 * address into BOOTSTRAP_ADMIN_EMAIL's account (a users:write holder changing an email, a self-registration
 * before the operator's first start) would become super_admin at the next restart. The CLI (`resetPassword`, an
 * operator's explicit act) promotes any existing account, replaces its password, verifies and reactivates it,
 * removes every second factor it had (CONTRACT §11, mailed to the address; returned for the CLI to print) and signs
 * out every session it had.
 */
export async function ensureSuperAdmin(
  ctx: ServiceContext,
  input: { email: string; password: string; resetPassword?: boolean },
): Promise<{ userId: string; created: boolean; promoted: boolean; removedFactors?: RemovedFactors }> {
  const email = normalizeEmail(input.email);
  const now = ctx.clock.now();
  const existing = await findUserByEmail(ctx.db, email);
  if (existing && !input.resetPassword) {
    ctx.logger.warn(
      { userId: existing.id },
      'bootstrap admin: an account with BOOTSTRAP_ADMIN_EMAIL already exists; left unchanged (promote it with npm run admin -- create-admin)',
    );
    return { userId: existing.id, created: false, promoted: false };
  }
  // The CLI's create-admin is a password being chosen: the policy applies. The boot-time bootstrap is not checked
  // (a refusal would stop the server's start; docs/passwords.md).
  if (input.resetPassword) await assertPasswordAllowed(ctx, input.password, { email });
  const passwordHash = await ctx.passwords.hash(input.password);
  const via = input.resetPassword ? 'cli' : 'bootstrap';
  const result = await withTransaction(ctx.db, async (trx) => {
    let userId: string;
    let removedFactors: RemovedFactors | undefined;
    if (existing) {
      userId = existing.id;
      // Lock order users -> factor tables -> sessions (docs/security.md).
      await lockUser(trx, userId);
      await updateUser(trx, userId, { isActive: true, emailVerified: true, passwordHash }, now);
      // CONTRACT §11: whoever enrolled a factor before the operator took the account must not keep a way in (a
      // passkey signs in on its own, and would even satisfy MFA_REQUIRED_FOR_ADMINS), nor a session under the old
      // password that would inherit super_admin.
      removedFactors = await removeEveryFactor(ctx, trx, userId, { via: 'create_admin', actorId: null });
      await revokeSessionsOfUser(trx, userId, now);
      await ctx.events.record(trx, { type: 'auth.password.reset', actorId: null, subjectId: userId, detail: { via } });
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
      await ctx.events.record(trx, { type: 'user.created', actorId: null, subjectId: userId, detail: { via } });
    }
    await grantSuperAdmin(trx, userId, now);
    await ctx.events.record(trx, { type: 'role.assigned', actorId: null, subjectId: userId, detail: { role: 'super_admin', via } });
    return { userId, created: !existing, promoted: true, removedFactors, user: existing };
  }).catch(async (err: unknown) => {
    // Several instances starting together with the same BOOTSTRAP_ADMIN_*: one creates the account, the others
    // find it taken (docs/operations.md "Several instances"). Theirs is the same account: nothing left to do.
    const created = !existing && isUniqueViolation(err) ? await findUserByEmail(ctx.db, email) : undefined;
    if (!created) throw err;
    return { userId: created.id, created: false, promoted: false, concurrent: true };
  });
  if ('concurrent' in result) return { userId: result.userId, created: false, promoted: false };
  if (result.user && result.removedFactors && anyFactorRemoved(result.removedFactors)) {
    mailFactorsReset(ctx, result.user, result.removedFactors, 'create_admin');
  }
  return { userId: result.userId, created: result.created, promoted: true, removedFactors: result.removedFactors };
}

/** Assigns the seeded global super_admin role (idempotent); the caller's transaction when given one. */
export async function grantSuperAdmin(db: DbOrTrx, userId: string, now: Date): Promise<void> {
  const role = await findRoleByName(db, 'super_admin', null);
  if (!role) throw new Error('the seeded super_admin role is missing: run the migrations');
  await assignRoleToUser(db, userId, role.id, now);
}

export async function countSuperAdmins(ctx: ServiceContext): Promise<number> {
  return countUsersWithGlobalRoles(ctx.db, ['super_admin']);
}

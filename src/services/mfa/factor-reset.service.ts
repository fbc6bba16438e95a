import { withTransaction, type DbOrTrx } from '../../db';
import { cancelOpenLinksOfUser } from '../../db/repositories/idp-flows.repo';
import { deleteRecoveryCodes } from '../../db/repositories/mfa-recovery-codes.repo';
import { burnMfaTokensOfUser } from '../../db/repositories/mfa-tokens.repo';
import { deleteTotp, findTotp } from '../../db/repositories/mfa-totp.repo';
import { burnChallengesOfUser } from '../../db/repositories/webauthn-challenges.repo';
import { deletePasskeysOfUser } from '../../db/repositories/webauthn-credentials.repo';
import { deleteIdentitiesOfUser } from '../../db/repositories/user-identities.repo';
import { lockUser } from '../../db/repositories/users.repo';
import { forbidden, found } from '../../errors';
import type { ServiceContext } from '../context';
import type { Actor } from '../rbac-policy';
import { assertMayTakeOverUser } from '../role-assignment.service';
import { mailFactorsReset } from './notifications';

/** What a reset took away from an account. */
export interface RemovedFactors {
  passkeys: number;
  /** A confirmed authenticator app (a pending enrolment is removed too, but was never a factor). */
  totp: boolean;
  /** Unused recovery codes. */
  recoveryCodes: number;
  /** The names of the providers whose linked identities were removed (CONTRACT §23: a way to sign in). */
  identities: string[];
}

/** Why every factor of an account went (the audit row's `detail.via`). */
export type FactorResetReason = 'set_password_link' | 'create_admin' | 'admin';

export function anyFactorRemoved(removed: RemovedFactors): boolean {
  return removed.passkeys > 0 || removed.totp || removed.recoveryCodes > 0 || removed.identities.length > 0;
}

/** "2 passkeys, an authenticator app and 10 recovery codes" (for the CLI and the notification). */
export function describeRemovedFactors(removed: RemovedFactors): string {
  const parts: string[] = [];
  if (removed.passkeys > 0) parts.push(`${removed.passkeys} passkey${removed.passkeys === 1 ? '' : 's'}`);
  if (removed.totp) parts.push('an authenticator app');
  if (removed.recoveryCodes > 0) parts.push(`${removed.recoveryCodes} recovery code${removed.recoveryCodes === 1 ? '' : 's'}`);
  if (removed.identities.length > 0) {
    const n = removed.identities.length;
    parts.push(`${n} linked sign-in${n === 1 ? '' : 's'} (${removed.identities.join(', ')})`);
  }
  if (parts.length === 0) return 'no second factors';
  return parts.length === 1 ? parts[0] : `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
}

/**
 * CONTRACT §11 "Taking an account back ends every factor" and §23 "a linked identity is a way to sign in": removes
 * every passkey, the TOTP secret (pending or not), the recovery codes and every linked upstream identity of the user,
 * spends every link still in progress (open `idp_flows` begun from /account, `idp_pending_links`), ends second
 * steps of sign-in already begun (mfa_tokens) and WebAuthn ceremonies in flight, and records
 * `mfa.factors.reset` and one `auth.identity.unlinked` per identity in the caller's transaction. The caller holds the users row
 * lock (lock order of docs/security.md: users, then the factor tables) and ends the sessions as its rule says.
 */
export async function removeEveryFactor(
  ctx: ServiceContext,
  trx: DbOrTrx,
  userId: string,
  reason: { via: FactorResetReason; actorId: string | null },
): Promise<RemovedFactors> {
  const now = ctx.clock.now();
  const totp = await findTotp(trx, userId);
  const passkeys = await deletePasskeysOfUser(trx, userId);
  if (totp) await deleteTotp(trx, userId);
  const recoveryCodes = await deleteRecoveryCodes(trx, userId);
  await burnMfaTokensOfUser(trx, userId, now);
  await burnChallengesOfUser(trx, userId, now);
  const identities = await deleteIdentitiesOfUser(trx, userId);
  // A link begun before the take-back (from /account, or waiting for the account to be proved) must not complete.
  await cancelOpenLinksOfUser(trx, userId, now);
  const removed = {
    passkeys: passkeys.length,
    totp: Boolean(totp?.confirmedAt),
    recoveryCodes,
    identities: identities.map((i) => i.providerName),
  };
  for (const identity of identities) {
    await ctx.events.record(trx, {
      type: 'auth.identity.unlinked',
      actorId: reason.actorId,
      subjectId: userId,
      detail: { provider: identity.providerSlug, identity_id: identity.id, via: reason.via },
    });
  }
  if (removed.passkeys > 0 || removed.totp || removed.recoveryCodes > 0) {
    await ctx.events.record(trx, {
      type: 'mfa.factors.reset',
      actorId: reason.actorId,
      subjectId: userId,
      // (`authenticator_app`, not `totp`: detail keys that look like secrets are dropped, services/events.ts.)
      detail: { via: reason.via, passkeys: removed.passkeys, authenticator_app: removed.totp, recovery_codes: removed.recoveryCodes },
    });
  }
  return removed;
}

/**
 * DELETE /api/users/:userId/mfa (CONTRACT §11): an administrator resets a user's second factors, e.g. after a lost
 * phone. It hands the account to whoever holds its password, so it needs users:write (the route) and strictly more
 * rights than every role the account holds (CONTRACT §8, rbac-policy.ts); one's own factors are changed on /account,
 * under the re-authentication rule, never here. Sessions stay; the owner is mailed.
 */
export async function resetUserFactors(ctx: ServiceContext, actor: Actor, userId: string): Promise<RemovedFactors> {
  if (userId === actor.userId) throw forbidden('Change your own second factors on your account page');
  const { user, removed } = await withTransaction(ctx.db, async (trx) => {
    const target = found(await lockUser(trx, userId), 'User');
    await assertMayTakeOverUser(trx, actor, userId, 'Resetting the second factors of this account');
    return { user: target, removed: await removeEveryFactor(ctx, trx, userId, { via: 'admin', actorId: actor.userId }) };
  });
  if (anyFactorRemoved(removed)) mailFactorsReset(ctx, user, removed, 'admin');
  return removed;
}

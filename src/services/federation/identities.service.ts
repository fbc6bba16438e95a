import { withTransaction } from '../../db';
import {
  confirmIdentityOfUser,
  deleteIdentityOfUser,
  listIdentitiesOfUser,
  type LinkedIdentity,
} from '../../db/repositories/user-identities.repo';
import { lockUser } from '../../db/repositories/users.repo';
import { listPasskeysOfUser } from '../../db/repositories/webauthn-credentials.repo';
import { AppError, notFound, unauthorized } from '../../errors';
import type { ServiceContext } from '../context';
import { mayUnlinkIdentity } from './linking-policy';

/** GET /api/auth/identities and the /account list (CONTRACT §16). */
export async function listOwnIdentities(ctx: ServiceContext, userId: string): Promise<LinkedIdentity[]> {
  return listIdentitiesOfUser(ctx.db, userId);
}

/**
 * DELETE /api/auth/identities/:id: refused (409) when it would leave the account no way to sign in. The user row is
 * locked first, so two concurrent unlinks cannot both pass the check and leave nothing.
 */
export async function unlinkOwnIdentity(ctx: ServiceContext, userId: string, identityId: string): Promise<void> {
  await withTransaction(ctx.db, async (trx) => {
    const user = await lockUser(trx, userId);
    if (!user) throw unauthorized();
    const [identities, passkeys] = await Promise.all([listIdentitiesOfUser(trx, userId), listPasskeysOfUser(trx, userId)]);
    const identity = identities.find((i) => i.id === identityId);
    if (!identity) throw notFound('Linked identity');
    if (!mayUnlinkIdentity({ hasPassword: user.passwordHash !== null, passkeys: passkeys.length, identities: identities.length })) {
      throw new AppError(
        'conflict',
        'This is the last way to sign in to your account: set a password or add a passkey before unlinking it',
      );
    }
    await deleteIdentityOfUser(trx, userId, identityId);
    await ctx.events.record(trx, {
      type: 'auth.identity.unlinked',
      actorId: userId,
      subjectId: userId,
      detail: { provider: identity.providerSlug, identity_id: identity.id },
    });
  });
}

/**
 * The owner confirms an identity flagged at the upgrade (linked to an administrator's account under the old rules,
 * docs/security.md) by signing in upstream as that very identity from /account while signed in here: it signs in again.
 */
export async function confirmFlaggedIdentity(ctx: ServiceContext, userId: string, identityId: string): Promise<void> {
  await withTransaction(ctx.db, async (trx) => {
    const identity = await confirmIdentityOfUser(trx, userId, identityId);
    if (!identity) return;
    await ctx.events.record(trx, {
      type: 'auth.identity.confirmed',
      actorId: userId,
      subjectId: userId,
      detail: { identity_id: identity.id, upstream_subject: identity.subject },
    });
  });
}

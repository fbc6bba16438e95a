import { withTransaction } from '../../db';
import { burnUnusedCodesOf } from '../../db/repositories/oauth-codes.repo';
import { deleteGrant, listGrantsOfUser, type GrantWithClientRow } from '../../db/repositories/oauth-grants.repo';
import { revokeSessionsOfUser } from '../../db/repositories/sessions.repo';
import { notFound } from '../../errors';
import type { ServiceContext } from '../context';

/** Connected apps: the clients this user approved (CONTRACT §4). */
export async function listConnectedApps(ctx: ServiceContext, userId: string): Promise<GrantWithClientRow[]> {
  return listGrantsOfUser(ctx.db, userId);
}

/**
 * Drops the grant and revokes that app's sessions for this user (spec §3); unredeemed codes are burned too, so
 * nothing issued before the disconnect can still become a token.
 */
export async function disconnectApp(ctx: ServiceContext, userId: string, clientId: string): Promise<void> {
  const now = ctx.clock.now();
  await withTransaction(ctx.db, async (trx) => {
    // Lock order oauth_codes -> sessions -> oauth_grants, as the code exchange takes them (docs/security.md).
    await burnUnusedCodesOf(trx, userId, clientId, now);
    await revokeSessionsOfUser(trx, userId, now, { clientId });
    const deleted = await deleteGrant(trx, userId, clientId);
    if (!deleted) throw notFound('Connected app');
    await ctx.events.record(trx, { type: 'oauth.grant.dropped', actorId: userId, subjectId: userId, clientId });
  });
}

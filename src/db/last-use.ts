import type { DbOrTrx } from '.';

/**
 * A row's "last used" time (a session's, a connected app's, a SCIM connection's) is written at most once per this many
 * seconds: listings stay meaningful without a write per request, and the requests of one user and client (many
 * devices refreshing at once) do not queue on that one row's lock until each other's commits (docs/performance.md).
 */
export const LAST_USE_EVERY_SECONDS = 60;

/** A recorded use before this time is stale: the write that records a use skips rows used since. */
export const lastUseStaleBefore = (now: Date): Date => new Date(now.getTime() - LAST_USE_EVERY_SECONDS * 1000);

/**
 * Records a use of the row(s) `where` names in `table` (a connected app, a SCIM connection), unless one was recorded
 * since lastUseStaleBefore(now): the one write of the rule above for a row read by its keys.
 */
export async function touchLastUse(
  db: DbOrTrx,
  table: 'oauth_grants' | 'scim_connections',
  where: Record<string, string>,
  now: Date,
): Promise<void> {
  await db(table)
    .where(where)
    .where((w) => w.whereNull('last_used_at').orWhere('last_used_at', '<', lastUseStaleBefore(now)))
    .update({ last_used_at: now });
}

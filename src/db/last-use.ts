/**
 * A row's "last used" time (a session's, a connected app's, a SCIM connection's) is written at most once per this many
 * seconds: listings stay meaningful without a write per request, and the requests of one user and client (many
 * devices refreshing at once) do not queue on that one row's lock until each other's commits (docs/performance.md).
 */
export const LAST_USE_EVERY_SECONDS = 60;

/** A recorded use before this time is stale: the write that records a use skips rows used since. */
export const lastUseStaleBefore = (now: Date): Date => new Date(now.getTime() - LAST_USE_EVERY_SECONDS * 1000);

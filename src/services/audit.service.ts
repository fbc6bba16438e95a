import { deleteAuditEventsBefore, listAuditEvents, type AuditEventFilter, type AuditEventRow } from '../db/repositories/audit-events.repo';
import { badRequest } from '../errors';
import { addSeconds } from '../lib/clock';
import type { ServiceContext } from './context';

export interface AuditPage {
  events: AuditEventRow[];
  /** Pass as `cursor` to get the next (older) page; null on the last page. */
  nextCursor: string | null;
}

const CURSOR = /^[1-9][0-9]{0,18}$/;

/** The cursor is the id of the last event on a page, opaque to clients (base64url). */
function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!CURSOR.test(id)) throw badRequest('Query is invalid', [{ path: 'cursor', message: 'cursor is not one this server gave out' }]);
  return id;
}

async function page(ctx: ServiceContext, filter: AuditEventFilter, cursor: string | undefined, limit: number): Promise<AuditPage> {
  const beforeId = decodeCursor(cursor);
  // Events this instance emitted are written in the background: let them land first (read your own writes).
  await ctx.events.idle?.();
  const rows = await listAuditEvents(ctx.db, { ...filter, beforeId }, limit + 1);
  const events = rows.slice(0, limit);
  const last = events[events.length - 1];
  return { events, nextCursor: rows.length > limit && last ? Buffer.from(last.id, 'utf8').toString('base64url') : null };
}

/** GET /api/admin/audit-events: newest first, filtered by actor, subject, types and time range. */
export async function searchAuditEvents(
  ctx: ServiceContext,
  query: { actor?: string; subject?: string; types?: string[]; from?: Date; to?: Date; cursor?: string; limit: number },
): Promise<AuditPage> {
  return page(
    ctx,
    { actorId: query.actor, subjectId: query.subject, types: query.types, from: query.from, to: query.to },
    query.cursor,
    query.limit,
  );
}

/** GET /api/auth/activity: the security events a user did or that concern them, newest first. */
export async function listOwnActivity(ctx: ServiceContext, userId: string, query: { cursor?: string; limit: number }): Promise<AuditPage> {
  return page(ctx, { involving: userId }, query.cursor, query.limit);
}

/** Rows per DELETE of the retention pruning. */
export const AUDIT_PRUNE_BATCH_SIZE = 1000;

/** Deletes events older than AUDIT_RETENTION_DAYS, batch by batch until a batch comes back short. */
export async function pruneAuditEvents(ctx: ServiceContext, batchSize = AUDIT_PRUNE_BATCH_SIZE): Promise<number> {
  const before = addSeconds(ctx.clock.now(), -ctx.config.auditRetentionDays * 24 * 3600);
  let total = 0;
  let deleted: number;
  do {
    deleted = await deleteAuditEventsBefore(ctx.db, before, batchSize);
    total += deleted;
  } while (deleted >= batchSize);
  return total;
}

import {
  countAuditEventsCapped,
  deleteAuditEventsBefore,
  listAuditEvents,
  listStoredEventTypes,
  type AuditEventFilter,
  type AuditEventRow,
} from '../db/repositories/audit-events.repo';
import { findClientNames } from '../db/repositories/oauth-clients.repo';
import { estimateRowCount } from '../db/repositories/table-estimates.repo';
import { deleteInBatches } from '../db/repositories/prune.repo';
import { badRequest } from '../errors';
import { addSeconds } from '../lib/clock';
import type { ServiceContext } from './context';
import { SECURITY_EVENT_TYPES } from './events';
import { cappedCount, COUNT_CAP, unfilteredCount, type ListCount } from '../declarations/list-count';

/**
 * Who did it: a user `{ type: 'user', id, email, name }` (email and name as they were then; null for events recorded
 * before they were kept, of an account gone since), a SCIM connection `{ type: 'scim_connection', id, name }` (its name
 * when it acted), or null for the system or an anonymous act.
 */
export function presentActor(e: Pick<AuditEventRow, 'actorId' | 'actorType' | 'actorName' | 'actorEmail'>) {
  if (!e.actorId) return null;
  if (e.actorType === 'scim_connection') return { type: 'scim_connection' as const, id: e.actorId, name: e.actorName ?? '' };
  return { type: 'user' as const, id: e.actorId, email: e.actorEmail, name: e.actorName };
}

/** Events about a person's own account: their subject is that person, also when only the actor was recorded. */
const PERSONAL_EVENT = /^(auth|user)\./;

/**
 * Whom it concerns, when that is a user: `{ id, email, name }` as they were when the event happened (docs/webhooks.md
 * `data.subject`). An `auth.*` or `user.*` event that names no subject (a sign-out) concerns its user actor. Null when
 * the subject is not a user (a role, a client) or was not known to the trail.
 */
export function presentSubject(
  e: Pick<AuditEventRow, 'type' | 'subjectId' | 'subjectEmail' | 'subjectName' | 'actorId' | 'actorType' | 'actorEmail' | 'actorName'>,
) {
  if (e.subjectId && e.subjectEmail) return { id: e.subjectId, email: e.subjectEmail, name: e.subjectName };
  if (!e.subjectId && PERSONAL_EVENT.test(e.type) && e.actorId && !e.actorType && e.actorEmail) {
    return { id: e.actorId, email: e.actorEmail, name: e.actorName };
  }
  return null;
}

/** The names of the applications these events name (the audit log shows applications by name), by client_id. */
export async function clientNamesOf(ctx: ServiceContext, events: readonly AuditEventRow[]): Promise<ReadonlyMap<string, string>> {
  const ids = events.map((e) => e.clientId).filter((id): id is string => id !== null);
  return new Map((await findClientNames(ctx.db, ids)).map((c) => [c.clientId, c.name]));
}

/** The group of an event type: its first dot-separated part (`auth`, `user`, `oauth`, …). */
export const eventTypeGroup = (type: string) => type.split('.')[0] ?? type;

/**
 * The event types the trail has ever held (not the whole catalogue), grouped by their prefix, groups and types sorted:
 * what the audit log's type filter offers.
 */
export async function listStoredTypes(
  ctx: ServiceContext,
): Promise<{ types: string[]; groups: Array<{ group: string; types: string[] }> }> {
  // A type the catalogue no longer names (a retired one) is left out: the filter (auditEventsQuery) would refuse it.
  const known: ReadonlySet<string> = new Set(SECURITY_EVENT_TYPES);
  const types = (await listStoredEventTypes(ctx.db)).filter((t) => known.has(t));
  const groups = new Map<string, string[]>();
  for (const type of types) groups.set(eventTypeGroup(type), [...(groups.get(eventTypeGroup(type)) ?? []), type]);
  return { types, groups: [...groups].map(([group, members]) => ({ group, types: members })) };
}

export interface AuditPage {
  events: AuditEventRow[];
  /** Pass as `cursor` to get the next (older) page; null on the last page. */
  nextCursor: string | null;
  /** Pass as `before` to get the previous (newer) page; null on the first page. The console's "Previous page". */
  prevCursor: string | null;
}

const CURSOR = /^[1-9][0-9]{0,18}$/;

/** A cursor is the id of an event on a page, opaque to clients (base64url). */
function decodeCursor(cursor: string | undefined, path: string): string | undefined {
  if (cursor === undefined) return undefined;
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!CURSOR.test(id)) throw badRequest('Query is invalid', [{ path, message: 'cursor is not one this server gave out' }]);
  return id;
}

const encodeCursor = (e: AuditEventRow | undefined) => (e ? Buffer.from(e.id, 'utf8').toString('base64url') : null);

/** Where a page starts: after `cursor` (the next page), before `before` (the previous page), or at the top. */
export interface PageCursors {
  cursor?: string;
  before?: string;
}

async function page(ctx: ServiceContext, filter: AuditEventFilter, cursors: PageCursors, limit: number): Promise<AuditPage> {
  const beforeId = decodeCursor(cursors.cursor, 'cursor');
  const afterId = cursors.cursor === undefined ? decodeCursor(cursors.before, 'before') : undefined;
  // Events this instance emitted are written in the background: let them land first (read your own writes).
  await ctx.events.idle?.();
  if (afterId !== undefined) {
    // The page before: the `limit` events just newer than the cursor; fewer than a page newer means the first page.
    const rows = await listAuditEvents(ctx.db, { ...filter, afterId }, limit + 1);
    if (rows.length > limit) {
      const events = rows.slice(1);
      return { events, nextCursor: encodeCursor(events[events.length - 1]), prevCursor: encodeCursor(events[0]) };
    }
    return page(ctx, filter, {}, limit);
  }
  const rows = await listAuditEvents(ctx.db, { ...filter, beforeId }, limit + 1);
  const events = rows.slice(0, limit);
  return {
    events,
    nextCursor: rows.length > limit ? encodeCursor(events[events.length - 1]) : null,
    prevCursor: beforeId !== undefined ? encodeCursor(events[0]) : null,
  };
}

export interface AuditSearch {
  actor?: string;
  subject?: string;
  types?: string[];
  from?: Date;
  to?: Date;
  cursor?: string;
  /** The previous page (a `prevCursor`), when `cursor` is not given. */
  before?: string;
  limit: number;
}

const filterOf = (query: AuditSearch): AuditEventFilter => ({
  actorId: query.actor,
  subjectId: query.subject,
  types: query.types,
  from: query.from,
  to: query.to,
});

/** GET /api/admin/audit-events: newest first, filtered by actor, subject, types and time range. */
export async function searchAuditEvents(ctx: ServiceContext, query: AuditSearch): Promise<AuditPage> {
  return page(ctx, filterOf(query), { cursor: query.cursor, before: query.before }, query.limit);
}

/**
 * How many events the filter matches, for the console: the table's estimate without a filter (a count of a million
 * rows is a scan), else a count that stops at COUNT_CAP.
 */
export async function countAuditEvents(ctx: ServiceContext, query: AuditSearch): Promise<ListCount> {
  const filter = filterOf(query);
  const count = async () => countAuditEventsCapped(ctx.db, filter, COUNT_CAP);
  const unfiltered = Object.values(filter).every((v) => v === undefined || (Array.isArray(v) && v.length === 0));
  return unfiltered ? unfilteredCount(() => estimateRowCount(ctx.db, 'audit_events'), count) : cappedCount(await count());
}

/** Rows per query of the CSV export: large enough that a million rows is a thousand short queries. */
export const EXPORT_BATCH = 1000;

/**
 * Every event the filter matches, newest first, batch after batch by keyset (each batch one short query; nothing
 * is held in memory but the current batch): the console's CSV export.
 */
export async function* exportAuditEvents(ctx: ServiceContext, query: AuditSearch, batch = EXPORT_BATCH): AsyncGenerator<AuditEventRow[]> {
  const filter = filterOf(query);
  await ctx.events.idle?.();
  let beforeId: string | undefined;
  for (;;) {
    const rows = await listAuditEvents(ctx.db, { ...filter, beforeId }, batch);
    if (rows.length > 0) yield rows;
    if (rows.length < batch) return;
    beforeId = rows[rows.length - 1].id;
  }
}

/** GET /api/auth/activity: the security events a user did or that concern them, newest first. */
export async function listOwnActivity(ctx: ServiceContext, userId: string, query: { cursor?: string; limit: number }): Promise<AuditPage> {
  return page(ctx, { involving: userId }, { cursor: query.cursor }, query.limit);
}

/** Rows per DELETE of the retention pruning. */
export const AUDIT_PRUNE_BATCH_SIZE = 1000;

/** Deletes events older than AUDIT_RETENTION_DAYS, batch by batch until a batch comes back short. */
export async function pruneAuditEvents(ctx: ServiceContext, batchSize = AUDIT_PRUNE_BATCH_SIZE): Promise<number> {
  const before = auditRetentionCutoff(ctx, ctx.clock.now());
  return deleteInBatches(() => deleteAuditEventsBefore(ctx.db, before, batchSize), batchSize);
}

/** What is older than this is past AUDIT_RETENTION_DAYS: audit events, and the deliveries kept as long as they are. */
export const auditRetentionCutoff = (ctx: ServiceContext, now: Date): Date => addSeconds(now, -ctx.config.auditRetentionDays * 24 * 3600);

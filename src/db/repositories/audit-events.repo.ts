import type { DbOrTrx } from '..';

export interface AuditEventRow {
  id: string;
  occurredAt: Date;
  type: string;
  actorId: string | null;
  subjectId: string | null;
  clientId: string | null;
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
  detail: Record<string, unknown>;
}

interface AuditEventRecord {
  id: string | number;
  occurred_at: Date;
  type: string;
  actor_id: string | null;
  subject_id: string | null;
  client_id: string | null;
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  detail: Record<string, unknown> | string | null;
}

function toAuditEventRow(r: AuditEventRecord): AuditEventRow {
  return {
    id: String(r.id),
    occurredAt: new Date(r.occurred_at),
    type: r.type,
    actorId: r.actor_id,
    subjectId: r.subject_id,
    clientId: r.client_id,
    ip: r.ip,
    userAgent: r.user_agent,
    requestId: r.request_id,
    detail: typeof r.detail === 'string' ? (JSON.parse(r.detail) as Record<string, unknown>) : (r.detail ?? {}),
  };
}

export interface NewAuditEvent {
  occurredAt: Date;
  type: string;
  /** Who did it (user id); null for anonymous or system actions. */
  actorId?: string | null;
  /** Whom or what it concerns (user id, role id, client id …). */
  subjectId?: string | null;
  clientId?: string | null;
  ip?: string | null;
  userAgent?: string | null;
  requestId?: string | null;
  detail?: Record<string, unknown>;
}

/** Appends events (the only write besides retention pruning; the table's trigger refuses UPDATE and DELETE). */
export async function insertAuditEvents(db: DbOrTrx, events: NewAuditEvent[]): Promise<void> {
  if (events.length === 0) return;
  await db('audit_events').insert(
    events.map((e) => ({
      occurred_at: e.occurredAt,
      type: e.type.slice(0, 100),
      actor_id: e.actorId ?? null,
      subject_id: e.subjectId ?? null,
      client_id: e.clientId ?? null,
      ip: e.ip ? e.ip.slice(0, 100) : null,
      user_agent: e.userAgent ? e.userAgent.slice(0, 512) : null,
      request_id: e.requestId ? e.requestId.slice(0, 128) : null,
      detail: JSON.stringify(e.detail ?? {}),
    })),
  );
}

export interface AuditEventFilter {
  actorId?: string;
  subjectId?: string;
  /** Events concerning this user: as actor or as subject (a user's own activity). */
  involving?: string;
  types?: readonly string[];
  from?: Date;
  to?: Date;
  /** Only events older (smaller id) than this one: the cursor of the previous page. */
  beforeId?: string;
}

/** Newest first; one more row than `limit` tells the caller whether another page exists. */
export async function listAuditEvents(db: DbOrTrx, filter: AuditEventFilter, limit: number): Promise<AuditEventRow[]> {
  const q = db<AuditEventRecord>('audit_events').select('*').orderBy('id', 'desc').limit(limit);
  if (filter.actorId !== undefined) q.where('actor_id', filter.actorId);
  if (filter.subjectId !== undefined) q.where('subject_id', filter.subjectId);
  if (filter.involving !== undefined) {
    const who = filter.involving;
    q.where((w) => w.where('actor_id', who).orWhere('subject_id', who));
  }
  if (filter.types?.length) q.whereIn('type', filter.types);
  if (filter.from) q.where('occurred_at', '>=', filter.from);
  if (filter.to) q.where('occurred_at', '<', filter.to);
  if (filter.beforeId !== undefined) q.where('id', '<', filter.beforeId);
  const rows = (await q) as AuditEventRecord[];
  return rows.map(toAuditEventRow);
}

/**
 * Retention: deletes at most `limit` events older than `before` in one short transaction (the only DELETE the
 * append-only trigger lets through, because of the transaction-local flag). Returns how many went.
 */
export async function deleteAuditEventsBefore(db: DbOrTrx, before: Date, limit: number): Promise<number> {
  return db.transaction(async (trx) => {
    await trx.raw(`select set_config('sso.audit_prune', 'on', true)`);
    const result = await trx.raw(
      'delete from audit_events where id in (select id from audit_events where occurred_at < ? order by id limit ?) returning id',
      [before, limit],
    );
    return ((result as { rows?: unknown[] }).rows ?? []).length;
  });
}

/** Events of each type per UTC day since `from` (the console's sign-in chart); days without events are absent. */
export async function countEventsPerDay(
  db: DbOrTrx,
  types: readonly string[],
  from: Date,
): Promise<Array<{ day: string; type: string; count: number }>> {
  const rows: Array<{ day: string; type: string; count: string }> = await db('audit_events')
    .select(db.raw(`to_char(date_trunc('day', occurred_at at time zone 'UTC'), 'YYYY-MM-DD') as day`), 'type', db.raw('count(*) as count'))
    .whereIn('type', types)
    .where('occurred_at', '>=', from)
    .groupByRaw('1, 2');
  return rows.map((r) => ({ day: r.day, type: r.type, count: Number(r.count) }));
}

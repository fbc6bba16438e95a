import type { Knex } from 'knex';
import type { DbOrTrx } from '..';
import { JSON_OBJECT, parseJsonText } from '../../lib/json-text';
import { convert, date, orNull, rowMapper, same, str, type RecordOf, type RowOf } from '../rows';

const auditEventColumns = {
  id: str,
  occurredAt: date,
  type: same<string>(),
  actorId: same<string | null>(),
  /** What kind of actor `actorId` names: null for a user (or nobody), `scim_connection` for a SCIM connection. */
  actorType: orNull<string>(),
  /** The actor's name when it acted: a SCIM connection's, or a user's first and last name (null when it had none). */
  actorName: orNull<string>(),
  /** A user actor's email when it acted (null for other actors, and for events older than the recording). */
  actorEmail: orNull<string>(),
  subjectId: same<string | null>(),
  /** When the subject is a user: its email and name when the event happened. */
  subjectEmail: orNull<string>(),
  subjectName: orNull<string>(),
  clientId: same<string | null>(),
  ip: same<string | null>(),
  userAgent: same<string | null>(),
  requestId: same<string | null>(),
  detail: convert((d: Record<string, unknown> | string | null) =>
    typeof d === 'string' ? (parseJsonText(d, JSON_OBJECT) ?? {}) : (d ?? {}),
  ),
};

export type AuditEventRow = RowOf<typeof auditEventColumns>;
export type AuditEventRecord = RecordOf<typeof auditEventColumns>;
export const toAuditEventRow = rowMapper(auditEventColumns);

export interface NewAuditEvent {
  occurredAt: Date;
  type: string;
  /** Who did it (user id); null for anonymous or system actions. */
  actorId?: string | null;
  /** Null (the default) when the actor is a user; `scim_connection` for a SCIM connection (CONTRACT §20). */
  actorType?: string | null;
  actorName?: string | null;
  /** Whom or what it concerns (user id, role id, client id …). */
  subjectId?: string | null;
  clientId?: string | null;
  ip?: string | null;
  userAgent?: string | null;
  requestId?: string | null;
  detail?: Record<string, unknown>;
}

const UUID_TEXT = `'^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'`;

/**
 * Appends events (the only write besides retention pruning; the table's trigger refuses UPDATE and DELETE). In the
 * same statement, the email and name of a user actor and of a user subject are read from `users` and written with the
 * event, so that the trail shows who it was even after the account is renamed or deleted (a service deleting an
 * account records the event before the delete, in the same transaction).
 */
export async function insertAuditEvents(db: DbOrTrx, events: NewAuditEvent[]): Promise<void> {
  if (events.length === 0) return;
  const rows = events.map((e) => ({
    occurred_at: e.occurredAt.toISOString(),
    type: e.type.slice(0, 100),
    actor_id: e.actorId ?? null,
    actor_type: e.actorType ?? null,
    actor_name: e.actorName ? e.actorName.slice(0, 200) : null,
    subject_id: e.subjectId ?? null,
    client_id: e.clientId ?? null,
    ip: e.ip ? e.ip.slice(0, 100) : null,
    user_agent: e.userAgent ? e.userAgent.slice(0, 512) : null,
    request_id: e.requestId ? e.requestId.slice(0, 128) : null,
    detail: e.detail ?? {},
  }));
  await db.raw(
    `insert into audit_events (occurred_at, type, actor_id, actor_type, actor_name, actor_email, subject_id, subject_email,
                               subject_name, client_id, ip, user_agent, request_id, detail)
     select e.occurred_at, e.type, e.actor_id, e.actor_type,
            coalesce(e.actor_name, nullif(btrim(au.first_name || ' ' || au.last_name), '')), au.email,
            e.subject_id, su.email, nullif(btrim(su.first_name || ' ' || su.last_name), ''),
            e.client_id, e.ip, e.user_agent, e.request_id, coalesce(e.detail, '{}'::jsonb)
       from rows from (json_to_recordset(?::json) as (occurred_at timestamptz, type text, actor_id text, actor_type text,
                       actor_name text, subject_id text, client_id text, ip text, user_agent text, request_id text,
                       detail jsonb)) with ordinality as e(occurred_at, type, actor_id, actor_type, actor_name, subject_id,
                       client_id, ip, user_agent, request_id, detail, n)
       left join users au on e.actor_type is null
                         and au.id = case when e.actor_id ~ ${UUID_TEXT} then e.actor_id::uuid end
       left join users su on su.id = case when e.subject_id ~ ${UUID_TEXT} then e.subject_id::uuid end
      order by e.n`,
    [JSON.stringify(rows)],
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
}

export interface AuditEventQuery extends AuditEventFilter {
  /** Keyset cursor: only events after this one in the list order (older); the next page. */
  beforeId?: string;
  /** Keyset cursor: only events before this one in the list order (newer); the previous page. */
  afterId?: string;
}

/**
 * The filter as a union of index range scans. An OR (several types; actor or subject) is one branch per value,
 * each answered in list order by its own index (audit_events_{type,actor,subject}_time_idx on (x, occurred_at,
 * id)); the other conditions apply to every branch. A row of the second `involving` branch whose actor is the
 * user is already in the first, so it is left out there (no duplicates).
 */
function branches(db: DbOrTrx, f: AuditEventFilter): Knex.QueryBuilder[] {
  const { involving } = f;
  const who: Array<(q: Knex.QueryBuilder) => void> =
    involving === undefined
      ? [() => undefined]
      : [
          (q) => q.where('actor_id', involving),
          (q) => q.where('subject_id', involving).where((w) => w.whereNull('actor_id').orWhereNot('actor_id', involving)),
        ];
  const types: Array<string | undefined> = f.types?.length ? [...new Set(f.types)] : [undefined];
  return who.flatMap((byWho) =>
    types.map((type) => {
      const q = db('audit_events');
      byWho(q);
      if (type !== undefined) q.where('type', type);
      if (f.actorId !== undefined) q.where('actor_id', f.actorId);
      if (f.subjectId !== undefined) q.where('subject_id', f.subjectId);
      if (f.from) q.where('occurred_at', '>=', f.from);
      if (f.to) q.where('occurred_at', '<', f.to);
      return q;
    }),
  );
}

const CURSOR_ID = /^[1-9][0-9]{0,18}$/;

/**
 * Newest first, by keyset on (occurred_at, id) — the time the event happened, the id breaking ties — so that a time
 * range and every filter are index range scans and deep pages cost what the first costs. Returns up to `limit` rows
 * in list order, after `beforeId` (older), before `afterId` (newer) or from the top; ask for one more than a page
 * to learn whether another follows. A cursor naming an event that is gone (pruned) gives no rows.
 */
export async function listAuditEvents(db: DbOrTrx, query: AuditEventQuery, limit: number): Promise<AuditEventRow[]> {
  const backwards = query.afterId !== undefined;
  const cursor = query.afterId ?? query.beforeId;
  if (cursor !== undefined && !CURSOR_ID.test(cursor)) return [];
  const order = backwards ? 'asc' : 'desc';
  const ordered = (q: Knex.QueryBuilder) =>
    q.orderBy([
      { column: 'occurred_at', order },
      { column: 'id', order },
    ]);
  const parts = branches(db, query).map((q) => {
    if (cursor !== undefined) {
      q.whereRaw(`(occurred_at, id) ${backwards ? '>' : '<'} ((select c.occurred_at from audit_events c where c.id = ?), ?::bigint)`, [
        cursor,
        cursor,
      ]);
    }
    return ordered(q.select('*')).limit(limit);
  });
  const q =
    parts.length === 1
      ? parts[0]
      : ordered(
          db
            .select('*')
            .from(db.raw(`(${parts.map(() => '(?)').join(' union all ')}) as e`, parts))
            .limit(limit),
        );
  const rows = (await q).map(toAuditEventRow);
  return backwards ? rows.reverse() : rows;
}

/**
 * How many events match, counting no further than `cap`: the exact number when it is at most `cap`, else `cap + 1`.
 * Each branch counts at most `cap + 1` index entries, so the work is bounded whatever the trail holds.
 */
export async function countAuditEventsCapped(db: DbOrTrx, filter: AuditEventFilter, cap: number): Promise<number> {
  const parts = branches(db, filter).map((q) => q.select(db.raw('1')).limit(cap + 1));
  const union = db.raw(`(${parts.map(() => '(?)').join(' union all ')}) as e`, parts);
  const inner = db
    .select(db.raw('1'))
    .from(union)
    .limit(cap + 1);
  const [row] = await db.count<{ count: string }[]>('* as count').from(inner.as('m'));
  return Number(row?.count ?? 0);
}

/**
 * Retention: deletes at most `limit` events older than `before` in one short transaction (the only DELETE the
 * append-only trigger lets through, because of the transaction-local flag). Returns how many went.
 */
export async function deleteAuditEventsBefore(db: DbOrTrx, before: Date, limit: number): Promise<number> {
  return db.transaction(async (trx) => {
    await trx.raw(`select set_config('sso.audit_prune', 'on', true)`);
    const result = await trx.raw<{ rows: unknown[] }>(
      'delete from audit_events where id in (select id from audit_events where occurred_at < ? order by id limit ?) returning id',
      [before, limit],
    );
    return result.rows.length;
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

/**
 * Every event type the trail holds, sorted: a loose index scan of audit_events_type_time_idx (one index probe per
 * distinct type, however many events there are).
 */
export async function listStoredEventTypes(db: DbOrTrx): Promise<string[]> {
  const result = await db.raw<{ rows: Array<{ type: string }> }>(
    `with recursive t as (
       (select type from audit_events order by type limit 1)
       union all
       select (select a.type from audit_events a where a.type > t.type order by a.type limit 1) from t where t.type is not null
     )
     select type from t where type is not null`,
  );
  return result.rows.map((r) => r.type);
}

import { once } from 'node:events';
import type { Response } from 'express';
import { z } from 'zod';
import type { AuditEventRow } from '../../db/repositories/audit-events.repo';
import { auditApi } from '../../routes/audit/audit.router';
import { auditEventsQuery } from '../../routes/audit/audit.schemas';
import { optionalText, text } from '../../routes/pages/page-kit';
import { declareRouter } from '../../routes/route';
import type { RouteDeps } from '../../routes/types';
import * as audit from '../../services/audit.service';
import type { ServiceContext } from '../../services/context';
import type { FieldErrors } from '../../views/console/components';
import * as views from '../../views/console/pages';
import { pageEnv } from '../../views/env';
import { consoleAction, consolePage, consoleSection, consoleStream, type ActionInput } from '../action';

/**
 * The audit log (CONTRACT §14): the page is GET /api/admin/audit-events (same guard, same query schema, its answer as
 * the view's props) with the count of what the filter matches; the CSV export of the filtered rows is streamed.
 */
const AUDIT_PAGE = 50;
const auditForm = z.object({
  type: text(100),
  actor: text(200),
  subject: text(200),
  from: text(10),
  to: text(10),
  cursor: optionalText(60),
  before: optionalText(60),
});
type AuditForm = z.output<typeof auditForm>;
type AuditQuery = z.output<typeof auditEventsQuery>;

/** A form's date (YYYY-MM-DD, UTC) as the API's ISO time; `nextDay` for an inclusive upper bound. */
function isoDay(day: string, nextDay = false): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return day ? day : undefined;
  const d = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== day) return day;
  if (nextDay) d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString();
}

/** The filter form as the API's query (checked by the API's own schema: one rule for both). */
const asQuery = (f: AuditForm) => ({
  type: f.type || undefined,
  actor: f.actor.trim() || undefined,
  subject: f.subject.trim() || undefined,
  from: isoDay(f.from),
  to: isoDay(f.to, true),
  cursor: f.cursor || undefined,
  before: f.before || undefined,
  limit: String(AUDIT_PAGE),
});
const searchOf = (q: AuditQuery): audit.AuditSearch => ({ ...q, types: q.type });

const filterOf = (f: AuditForm) => ({ type: f.type, actor: f.actor, subject: f.subject, from: f.from, to: f.to });
const linkOf = (path: string, f: AuditForm, extra: Record<string, string> = {}) =>
  `/admin/${path}?${new URLSearchParams({ ...Object.fromEntries(Object.entries(filterOf(f)).filter(([, v]) => v)), ...extra })}`;

type Caller = ActionInput<never, never>['call'];
type Groups = views.AuditProps['groups'];
const groupsBy = async (call: Caller): Promise<Groups> => (await call(auditApi.types, {})).groups;

/** The page; the type filter offers the types ever stored, grouped (GET /api/admin/audit-events/types). */
const page = async (
  groups: Promise<Groups>,
  f: AuditForm,
  data: { errors?: FieldErrors } & Partial<Omit<views.AuditProps, 'filter' | 'groups' | 'csv'>>,
  status = 200,
) =>
  consolePage(
    views.renderAudit,
    { events: [], errors: {}, ...data, filter: filterOf(f), groups: await groups, csv: linkOf('audit.csv', f) },
    pageEnv().t.console.audit.title,
    status,
  );

/**
 * The columns of the audit CSV export, one row per event: people and applications by name and email as the audit log
 * shows them (as recorded when the event happened), their ids beside; the detail as labelled fields in the page's
 * language and, for programs, as recorded (JSON).
 */
const CSV_HEADER = [
  'id',
  'occurred_at',
  'type',
  'actor_name',
  'actor_email',
  'actor_id',
  'subject_name',
  'subject_email',
  'subject_id',
  'application',
  'client_id',
  'ip',
  'user_agent',
  'request_id',
  'detail',
  'detail_json',
];
const csvRow = (e: AuditEventRow, clientNames: ReadonlyMap<string, string>): unknown[] => {
  const actor = audit.presentActor(e);
  const subject = audit.presentSubject(e);
  return [
    e.id,
    e.occurredAt.toISOString(),
    e.type,
    actor?.name,
    actor?.type === 'user' ? actor.email : null,
    e.actorId,
    subject?.name,
    subject?.email,
    e.subjectId,
    e.clientId === null ? null : clientNames.get(e.clientId),
    e.clientId,
    e.ip,
    e.userAgent,
    e.requestId,
    views.auditDetailLine(e.detail),
    e.detail,
  ];
};

function csvCell(value: unknown): string {
  const s = value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  // RFC 4180 quoting; a leading = + - @ is neutralised so that a spreadsheet never runs a cell as a formula (OWASP CSV injection).
  const safe = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/**
 * Streamed batch by batch (keyset, one short query each): memory holds one batch, whatever the trail holds. A slow
 * reader holds the next query back (the socket's buffer must drain first); a closed one (a cancelled download) ends it.
 */
async function writeCsv(ctx: ServiceContext, q: AuditQuery, res: Response): Promise<void> {
  res.status(200).type('text/csv; charset=utf-8').set('Content-Disposition', 'attachment; filename="audit-events.csv"');
  let closed = false;
  res.once('close', () => (closed = true));
  const send = async (chunk: string) => {
    if (!res.write(chunk)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
  };
  await send(`${CSV_HEADER.join(',')}\r\n`);
  for await (const batch of audit.exportAuditEvents(ctx, { ...searchOf(q), cursor: undefined, before: undefined })) {
    if (closed || res.destroyed) break;
    const clientNames = await audit.clientNamesOf(ctx, batch);
    await send(batch.map((e) => `${csvRow(e, clientNames).map(csvCell).join(',')}\r\n`).join(''));
  }
  res.end();
}

export function createConsoleAuditRouter(deps: RouteDeps) {
  const { ctx } = deps;
  const routes = consoleSection('audit', ctx, [
    consoleAction(auditApi.list, {
      path: '/audit',
      summary: 'Console: audit log',
      form: auditForm,
      input: asQuery,
      // A cursor the server never gave out: said about the filter.
      field: 'from',
      invalid: ({ values, errors }, { call }) => page(groupsBy(call), values, { errors }, 400),
      done: async (r, { form: f, call }) => {
        const count = await audit.countAuditEvents(ctx, searchOf(auditEventsQuery.parse(asQuery(f))));
        const paged = f.cursor !== undefined || f.before !== undefined;
        return page(groupsBy(call), f, {
          events: r.events,
          count,
          next: r.next_cursor ? linkOf('audit', f, { cursor: r.next_cursor }) : undefined,
          prev: r.prev_cursor ? linkOf('audit', f, { before: r.prev_cursor }) : paged ? linkOf('audit', f) : undefined,
        });
      },
    }),
    // Refused before the first byte of CSV (a filter PostgreSQL would refuse mid-stream reset the connection).
    consoleStream(auditApi.list, {
      path: '/audit.csv',
      summary: 'Console: audit log as CSV',
      form: auditForm,
      input: (f) => ({ ...asQuery(f), cursor: undefined, before: undefined }),
      invalid: async ({ values, errors }) =>
        page(
          audit.listStoredTypes(ctx).then((t) => t.groups),
          values,
          { errors },
          400,
        ),
      write: (q, res) => writeCsv(ctx, q, res),
    }),
  ]);
  return declareRouter(deps, routes, { tags: ['Console'] });
}

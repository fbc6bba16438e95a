import { auditApi, exportedAuditEvents } from '../../routes/audit/audit.router';
import { auditEventsQuery } from '../../wire/audit/audit.schemas';
import * as views from '../../views/console/pages';
import { consoleAction, consolePage, consoleRouter, consoleStream, pageEnv, type Caller, type FieldErrors } from '../action';
import { writeCsv } from './audit.csv';
import { asQuery, auditForm, linkOf, filterOf, type AuditForm } from './audit.form';

/**
 * The audit log (CONTRACT §14): the page is GET /api/admin/audit-events (same guard, same query schema, its answer as
 * the view's props) with GET /api/admin/audit-events/count; the CSV export of the filtered events is streamed from
 * the list's export port (exportedAuditEvents), in the list's wire shape.
 */
type Groups = views.AuditProps['groups'];
const groupsBy = async (call: Caller['call']): Promise<Groups> => (await call(auditApi.types, {})).groups;

/** The page; the type filter offers the types ever stored, grouped (GET /api/admin/audit-events/types). */
const page = async (
  groups: Promise<Groups>,
  f: AuditForm,
  data: { errors?: FieldErrors } & Partial<Omit<views.AuditProps, 'filter' | 'groups' | 'csv'>>,
  status = 200,
) => {
  const title = pageEnv().t.console.audit.title;
  return consolePage(
    views.renderAudit,
    { events: [], errors: {}, ...data, filter: filterOf(f), groups: await groups, csv: linkOf('audit.csv', f) },
    title,
    status,
  );
};

export const createConsoleAuditRouter = consoleRouter('audit', () => [
  consoleAction(auditApi.list, {
    path: '/audit',
    summary: 'Console: audit log',
    form: auditForm,
    input: asQuery,
    // A cursor the server never gave out: said about the filter.
    field: 'from',
    invalid: ({ values, errors }, { call }) => page(groupsBy(call), values, { errors }, 400),
    done: async (r, { form: f, call, inRequest }) => {
      const { count } = await call(auditApi.count, { query: auditEventsQuery.parse(asQuery(f)) });
      const paged = f.cursor !== undefined || f.before !== undefined;
      return inRequest(() =>
        page(groupsBy(call), f, {
          events: r.events,
          count,
          next: r.next_cursor ? linkOf('audit', f, { cursor: r.next_cursor }) : undefined,
          prev: r.prev_cursor ? linkOf('audit', f, { before: r.prev_cursor }) : paged ? linkOf('audit', f) : undefined,
        }),
      );
    },
  }),
  // Refused before the first byte of CSV (a filter PostgreSQL would refuse mid-stream reset the connection).
  consoleStream(auditApi.list, {
    path: '/audit.csv',
    summary: 'Console: audit log as CSV',
    form: auditForm,
    input: (f) => ({ ...asQuery(f), cursor: undefined, before: undefined }),
    invalid: ({ values, errors }, { call }) => page(groupsBy(call), values, { errors }, 400),
    write: (q, res, ctx) => writeCsv(exportedAuditEvents(ctx, q), res),
  }),
]);

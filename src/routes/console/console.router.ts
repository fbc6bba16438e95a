import { once } from 'node:events';
import type { Response } from 'express';
import { z } from 'zod';
import type { AuditEventRow } from '../../db/repositories/audit-events.repo';
import * as audit from '../../services/audit.service';
import { SECURITY_EVENT_TYPES } from '../../services/events';
import { listSigningKeys, rotateSigningKey } from '../../services/oidc/signing-keys.service';
import { type Principal } from '../../services/principal';
import { SUPER_ADMIN } from '../../services/rbac-policy';
import type { ConsoleSection } from '../../views/console/layout';
import * as views from '../../views/console/pages';
import { pageEnv } from '../../views/env';
import { auditEventsQuery } from '../audit/audit.schemas';
import { html, optionalText, text } from '../pages/page-kit';
import { declareRouter, route } from '../route';
import type { RouteDeps } from '../types';
import { act, CONSOLE, confirmBody, fieldErrors, frameOf, refuseConsoleForm, refusalOf } from './console-kit';

/** The console's catalogue of the request's language (CONTRACT §15). */
const c = () => pageEnv().t.console;

const AUDIT_PAGE = 50;
/** The columns of the audit CSV export, one row per event. */
const CSV_HEADER = ['id', 'occurred_at', 'type', 'actor_id', 'subject_id', 'client_id', 'ip', 'user_agent', 'request_id', 'detail'];
const csvRow = (e: AuditEventRow): unknown[] => [
  e.id,
  e.occurredAt.toISOString(),
  e.type,
  e.actorId,
  e.subjectId,
  e.clientId,
  e.ip,
  e.userAgent,
  e.requestId,
  e.detail,
];

const auditForm = z.object({
  type: text(100),
  actor: text(200),
  subject: text(200),
  from: text(10),
  to: text(10),
  cursor: optionalText(60),
  before: optionalText(60),
});

/** A form's date (YYYY-MM-DD, UTC) as the API's ISO time; `nextDay` for an inclusive upper bound. */
function isoDay(day: string, nextDay = false): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return day ? day : undefined;
  const d = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== day) return day;
  if (nextDay) d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString();
}

function csvCell(value: unknown): string {
  const s = value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  // RFC 4180 quoting; a leading = + - @ is neutralised so that a spreadsheet never runs a cell as a formula (OWASP CSV injection).
  const safe = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/**
 * The administration console under /admin (CONTRACT §14): server-rendered pages over the services the REST API uses.
 * Each route declares the guard of its REST twin (`twin`), so the console refuses exactly what the API refuses;
 * MFA_REQUIRED_FOR_ADMINS applies to every route; posts need the CSRF pair and answer 303 with a flash message.
 */
export function createConsoleRouter(deps: RouteDeps) {
  const { ctx } = deps;
  const { config } = ctx;
  const post = { ...CONSOLE, method: 'post', csrf: refuseConsoleForm, form: true } as const;
  const frame = (req: Parameters<typeof frameOf>[0], res: Response, principal: Principal, section: ConsoleSection, title: string) =>
    frameOf(req, res, config, principal, section, title);

  const isSuperAdmin = (p: Principal) => p.roleNames.includes(SUPER_ADMIN);

  return declareRouter(
    deps,
    [
      // Audit log
      route(
        {
          ...CONSOLE,
          method: 'get',
          path: '/audit',
          summary: 'Console: audit log',
          permission: 'system:manage_users',
          twin: 'GET /api/admin/audit-events',
          query: auditForm,
        },
        async ({ query, principal }, req, res) => {
          const parsed = parseAuditFilter(query, AUDIT_PAGE);
          const f = frame(req, res, principal, 'audit', c().audit.title);
          const filterValues = { type: query.type, actor: query.actor, subject: query.subject, from: query.from, to: query.to };
          const filterQuery = new URLSearchParams(Object.entries(filterValues).filter(([, v]) => v));
          const base = { filter: filterValues, types: SECURITY_EVENT_TYPES, csv: `/admin/audit.csv?${filterQuery}` };
          if (!parsed.success)
            return html(res, 400, views.renderAudit(f, { ...base, events: [], errors: fieldErrors(parsed.error.issues) }));
          let page;
          let count;
          try {
            [page, count] = await Promise.all([audit.searchAuditEvents(ctx, parsed.data), audit.countAuditEvents(ctx, parsed.data)]);
          } catch (err) {
            const refusal = refusalOf(err);
            if (refusal === undefined) throw err;
            return html(res, 400, views.renderAudit(f, { ...base, events: [], errors: { from: refusal } }));
          }
          const with_ = (extra: Record<string, string>) =>
            `/admin/audit?${new URLSearchParams({ ...Object.fromEntries(filterQuery), ...extra })}`;
          const paged = query.cursor !== undefined || query.before !== undefined;
          html(
            res,
            200,
            views.renderAudit(f, {
              ...base,
              events: page.events,
              count,
              errors: {},
              next: page.nextCursor ? with_({ cursor: page.nextCursor }) : undefined,
              prev: page.prevCursor ? with_({ before: page.prevCursor }) : paged ? with_({}) : undefined,
            }),
          );
        },
      ),
      route(
        {
          ...CONSOLE,
          method: 'get',
          path: '/audit.csv',
          summary: 'Console: audit log as CSV',
          permission: 'system:manage_users',
          twin: 'GET /api/admin/audit-events',
          query: auditForm,
          response: { description: 'text/csv', kind: 'html' },
        },
        async ({ query, principal }, req, res) => {
          const parsed = parseAuditFilter({ ...query, cursor: undefined, before: undefined }, AUDIT_PAGE);
          // Refused before the first byte of CSV (a filter PostgreSQL would refuse mid-stream reset the connection):
          // the audit page again, 400, naming the field.
          if (!parsed.success) {
            const filter = { type: query.type, actor: query.actor, subject: query.subject, from: query.from, to: query.to };
            return html(
              res,
              400,
              views.renderAudit(frame(req, res, principal, 'audit', c().audit.title), {
                filter,
                types: SECURITY_EVENT_TYPES,
                csv: `/admin/audit.csv?${new URLSearchParams(Object.entries(filter).filter(([, v]) => v))}`,
                events: [],
                errors: fieldErrors(parsed.error.issues),
              }),
            );
          }
          res.status(200).type('text/csv; charset=utf-8').set('Content-Disposition', 'attachment; filename="audit-events.csv"');
          // Streamed batch by batch (keyset, one short query each): memory holds one batch, whatever the trail holds.
          // A slow reader holds the next query back (the socket's buffer must drain first); a closed one ends it.
          // The response closing before it ended: the download was cancelled.
          let closed = false;
          res.once('close', () => (closed = true));
          const send = async (chunk: string) => {
            if (!res.write(chunk)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
          };
          await send(`${CSV_HEADER.join(',')}\r\n`);
          for await (const batch of audit.exportAuditEvents(ctx, parsed.data)) {
            if (closed || res.destroyed) break;
            await send(batch.map((e) => `${csvRow(e).map(csvCell).join(',')}\r\n`).join(''));
          }
          res.end();
        },
      ),

      // Signing keys: the API has no route for them (the CLI rotates): reading is the spec's "admin", rotating super_admin.
      route(
        { ...CONSOLE, method: 'get', path: '/signing-keys', summary: 'Console: signing keys', admin: true },
        async ({ principal }, req, res) => {
          const keys = await listSigningKeys(ctx);
          html(
            res,
            200,
            views.renderSigningKeys(frame(req, res, principal, 'signing-keys', c().keys.title), {
              keys,
              canRotate: isSuperAdmin(principal),
            }),
          );
        },
      ),
      route(
        { ...post, path: '/signing-keys/rotate', summary: 'Console: rotate the signing key', role: SUPER_ADMIN, body: confirmBody },
        async ({ body, principal }, req, res) => {
          if (body.confirm !== 'yes') {
            return html(
              res,
              200,
              views.renderConfirm(frame(req, res, principal, 'signing-keys', c().keys.rotateTitle), {
                message: c().keys.rotateText,
                action: '/admin/signing-keys/rotate',
                button: c().keys.rotate,
                cancel: '/admin/signing-keys',
              }),
            );
          }
          await act(config, res, '/admin/signing-keys', async () => {
            const { kid } = await rotateSigningKey(ctx);
            return c().keys.rotated(kid);
          });
        },
      ),
    ],
    { tags: ['Console'] },
  );
}

/** The console's audit filters through the API's own query schema (one rule for both). */
function parseAuditFilter(
  query: { type: string; actor: string; subject: string; from: string; to: string; cursor?: string; before?: string },
  limit: number,
) {
  const parsed = auditEventsQuery.safeParse({
    type: query.type || undefined,
    actor: query.actor.trim() || undefined,
    subject: query.subject.trim() || undefined,
    from: isoDay(query.from),
    to: isoDay(query.to, true),
    cursor: query.cursor || undefined,
    limit: String(limit),
  });
  // The console's previous-page cursor has the shape of the API's cursor.
  const before = query.before ? auditEventsQuery.safeParse({ cursor: query.before }) : undefined;
  if (before && !before.success) return { success: false, error: before.error } as const;
  return parsed.success
    ? ({
        success: true,
        data: {
          actor: parsed.data.actor,
          subject: parsed.data.subject,
          types: parsed.data.type,
          from: parsed.data.from,
          to: parsed.data.to,
          cursor: parsed.data.cursor,
          before: before?.data.cursor,
          limit: parsed.data.limit,
        },
      } as const)
    : ({ success: false, error: parsed.error } as const);
}

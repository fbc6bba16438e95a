import { z } from 'zod';
import { optionalText, text } from '../action';

/** The audit log's filter form: its fields as the API's query (GET /api/admin/audit-events) and as the page's links. */
export const AUDIT_PAGE = 50;
export const auditForm = z.object({
  type: text(100),
  actor: text(200),
  subject: text(200),
  from: text(10),
  to: text(10),
  cursor: optionalText(60),
  before: optionalText(60),
});
export type AuditForm = z.output<typeof auditForm>;

/** A form's date (YYYY-MM-DD, UTC) as the API's ISO time; `nextDay` for an inclusive upper bound. */
function isoDay(day: string, nextDay = false): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return day ? day : undefined;
  const d = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== day) return day;
  if (nextDay) d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString();
}

/** The filter form as the API's query (checked by the API's own schema: one rule for both). */
export const asQuery = (f: AuditForm) => ({
  type: f.type || undefined,
  actor: f.actor.trim() || undefined,
  subject: f.subject.trim() || undefined,
  from: isoDay(f.from),
  to: isoDay(f.to, true),
  cursor: f.cursor || undefined,
  before: f.before || undefined,
  limit: String(AUDIT_PAGE),
});
export const filterOf = (f: AuditForm) => ({ type: f.type, actor: f.actor, subject: f.subject, from: f.from, to: f.to });
export const linkOf = (path: string, f: AuditForm, extra: Record<string, string> = {}) =>
  `/admin/${path}?${new URLSearchParams({ ...Object.fromEntries(Object.entries(filterOf(f)).filter(([, v]) => v)), ...extra })}`;

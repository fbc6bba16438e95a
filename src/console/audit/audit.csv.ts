import { runInRequest } from '../../lib/request-context';
import type { Response } from 'express';
import type { AuditEvent } from '../../wire/audit/audit.schemas';
import { auditDetailLine } from '../../views/console/pages';

/** The audit log as CSV (the console's download): the filtered events, streamed. */

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
const csvRow = ({ actor, subject, ...e }: AuditEvent): unknown[] => [
  e.id,
  e.occurred_at,
  e.type,
  actor?.name,
  actor?.type === 'user' ? actor.email : null,
  e.actor_id,
  subject?.name,
  subject?.email,
  e.subject_id,
  e.client?.name,
  e.client_id,
  e.ip,
  e.user_agent,
  e.request_id,
  auditDetailLine(e.detail),
  e.detail,
];

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
export async function writeCsv(batches: AsyncIterable<AuditEvent[]>, res: Response): Promise<void> {
  res.status(200).type('text/csv; charset=utf-8').set('Content-Disposition', 'attachment; filename="audit-events.csv"');
  let closed = false;
  res.once('close', () => (closed = true));
  // Waits for 'drain' or 'close', then removes both listeners: racing two `once` promises would leave the loser's
  // listeners on the response at every full buffer (MaxListenersExceededWarning after ten on a long export).
  const send = async (chunk: string) => {
    if (res.write(chunk)) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.on('drain', done);
      res.on('close', done);
    });
  };
  await send(`${CSV_HEADER.join(',')}\r\n`);
  for await (const batch of batches) {
    if (closed || res.destroyed) break;
    // Each batch's detail lines are written in the request's language (read outside an await: lib/request-context.ts).
    const lines = runInRequest(res.req, () => batch.map((e) => `${csvRow(e).map(csvCell).join(',')}\r\n`).join(''));
    await send(lines);
  }
  res.end();
}

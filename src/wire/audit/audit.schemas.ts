import { z } from 'zod';
import { sayIssue } from '../../i18n';
import { SECURITY_EVENT_TYPES } from '../../services/events';
import { cursorField, pageLimitField, timestampField } from '../common.schemas';

export const AUDIT_PAGE_MAX = 200;

const limitField = pageLimitField(50, AUDIT_PAGE_MAX).meta({ description: 'Events per page (default 50; more than 200 is capped to 200)' });

const timeField = (name: string, description: string) =>
  z.iso
    .datetime({ offset: true, error: `${name} must be an ISO 8601 date-time, e.g. 2026-11-22T10:00:00Z` })
    .transform((s) => new Date(s))
    .meta({ description });

const idField = (name: string, description: string) =>
  z
    .string({ error: `${name} must be a single string` })
    .trim()
    .min(1)
    .max(200, `${name} is too long`)
    // PostgreSQL refuses a NUL in text: checked here, before a query runs or a CSV starts (issue 30).
    .regex(/^\P{Cc}*$/u, `${name} must not contain control characters`)
    .meta({ description });

/** `type` takes one type or several separated by commas. */
const typesField = z
  .string({ error: 'type must be a single string (several types separated by commas)' })
  .transform((s) =>
    s
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean),
  )
  .pipe(
    z
      .array(z.enum(SECURITY_EVENT_TYPES, { error: 'type must name security event types (see docs/operations.md)' }))
      .min(1)
      .max(20),
  )
  .meta({ description: 'One event type, or several separated by commas (e.g. auth.login.failed,auth.login.throttled)' });

export const auditEventsQuery = z
  .object({
    actor: idField('actor', 'Only events done by this user id').optional(),
    subject: idField('subject', 'Only events concerning this user, role or client id').optional(),
    type: typesField.optional(),
    from: timeField('from', 'Events at or after this time').optional(),
    to: timeField('to', 'Events before this time').optional(),
    cursor: cursorField.optional(),
    before: cursorField
      .meta({ description: 'prev_cursor of a later page: the page before it (newer events); ignored with cursor' })
      .optional(),
    limit: limitField,
  })
  .refine((q) => !q.from || !q.to || q.from < q.to, { ...sayIssue('auditFromBeforeTo'), path: ['from'] });

export const activityQuery = z.object({ cursor: cursorField.optional(), limit: limitField });

const common = {
  id: z.string(),
  type: z.string(),
  occurred_at: timestampField,
  client_id: z.string().nullable(),
  ip: z.string().nullable(),
  user_agent: z.string().nullable(),
  detail: z.record(z.string(), z.unknown()),
};

/** Who did it: a user, a SCIM connection (CONTRACT §20), or null (the system, an anonymous act). */
export const actorField = z
  .union([
    z.strictObject({
      type: z.literal('user'),
      id: z.string(),
      email: z.string().nullable().meta({ description: "The user's email when the event happened (null: not recorded)" }),
      name: z.string().nullable().meta({ description: "The user's first and last name when the event happened" }),
    }),
    z.strictObject({ type: z.literal('scim_connection'), id: z.string(), name: z.string() }),
  ])
  .nullable();

/** Whom it concerns when that is a user, as they were when the event happened (null otherwise). */
export const subjectField = z
  .strictObject({ id: z.string(), email: z.string(), name: z.string().nullable() })
  .nullable()
  .meta({ description: 'The user the event concerns, with the email and name recorded when it happened; null when not a user' });

export const auditEventsBody = z.strictObject({
  events: z.array(
    z.strictObject({
      ...common,
      actor_id: z.string().nullable(),
      actor: actorField,
      subject_id: z.string().nullable(),
      subject: subjectField,
      client: z
        .strictObject({ client_id: z.string(), name: z.string().nullable() })
        .nullable()
        .meta({ description: 'The application the event names, with its current name (null: the client is gone)' }),
      request_id: z.string().nullable(),
    }),
  ),
  next_cursor: z.string().nullable(),
  /** Passed as `before`, the page before this one (newer events); null on the first page. */
  prev_cursor: z.string().nullable(),
});

/** GET /api/admin/audit-events/types: the types the trail has ever held, and the same grouped by prefix. */
export const auditEventTypesBody = z.strictObject({
  types: z.array(z.string()).meta({ description: 'Every event type stored at least once, sorted' }),
  groups: z
    .array(z.strictObject({ group: z.string(), types: z.array(z.string()) }))
    .meta({ description: 'The same types grouped by their first part (auth, mfa, oauth, user, …), sorted' }),
});

export type AuditEventsBody = z.output<typeof auditEventsBody>;
/** One event of GET /api/admin/audit-events as sent. */
export type AuditEvent = AuditEventsBody['events'][number];

/**
 * How many events a filter matches, without counting a large trail: `exact`, `more-than` (a filtered count stops at
 * 10,000) or `about` (the planner's estimate for an unfiltered trail beyond that).
 */
export const auditEventsCountBody = z.strictObject({
  count: z.strictObject({ kind: z.enum(['exact', 'more-than', 'about']), value: z.number().int() }),
});

export const activityBody = z.strictObject({
  events: z.array(z.strictObject({ ...common, actor: z.enum(['self', 'other', 'system']) })),
  next_cursor: z.string().nullable(),
});

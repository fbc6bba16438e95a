import type { z } from 'zod';
import * as audit from '../../services/audit.service';
import { endpointsWith, route, routerOf, servingRouter } from '../route';
import { presentActivity, presentAuditEvent, presentPage } from './audit.presenters';
import type { ServiceContext } from '../../services/context';
import {
  activityBody,
  activityQuery,
  auditEventTypesBody,
  auditEventsBody,
  auditEventsCountBody,
  auditEventsQuery,
  type AuditEvent,
} from '../../wire/audit/audit.schemas';

const auditTrail = endpointsWith({ auth: 'user', permission: 'system:manage_users', tags: ['Admin'], noStore: true });

/**
 * GET /api/admin/audit-events (system:manage_users): the audit trail, filtered, newest first, cursor-paginated both
 * ways. The console's audit log is built from this endpoint (src/console/audit/audit.console.ts).
 */
export const auditApi = {
  list: auditTrail.get(
    '/audit-events',
    {
      summary: 'The audit trail of security events, newest first (docs/operations.md "Audit trail")',
      query: auditEventsQuery,
      response: { description: '{ events, next_cursor, prev_cursor }', schema: auditEventsBody },
    },
    async ({ query }, ctx) => {
      const page = await audit.searchAuditEvents(ctx, {
        actor: query.actor,
        subject: query.subject,
        types: query.type,
        from: query.from,
        to: query.to,
        cursor: query.cursor,
        before: query.before,
        limit: query.limit,
      });
      const names = await audit.clientNamesOf(ctx, page.events);
      return { ...presentPage(page, (e) => presentAuditEvent(e, names)), prev_cursor: page.prevCursor };
    },
  ),
  count: auditTrail.get(
    '/audit-events/count',
    {
      summary: 'How many events the filter of GET /api/admin/audit-events matches (cursors and limit ignored)',
      description:
        'The same query as the list: actor, subject, type, from, to. `count.kind` is `exact`, `more-than` (a filtered count ' +
        'stops at 10,000) or `about` (the estimate of an unfiltered trail beyond that).',
      query: auditEventsQuery,
      response: { description: '{ count: { kind, value } }', schema: auditEventsCountBody },
    },
    async ({ query }, ctx) => ({ count: await audit.countAuditEvents(ctx, { ...query, types: query.type }) }),
  ),
  types: auditTrail.get(
    '/audit-events/types',
    {
      summary: 'The event types the audit trail has ever held, grouped by prefix (the type filter of the audit log)',
      response: { description: '{ types, groups: [{ group, types }] }', schema: auditEventTypesBody },
    },
    async (_input, ctx) => audit.listStoredTypes(ctx),
  ),
};

/**
 * Every event the filter of `auditApi.list` matches, newest first, in batches, as the list answers them: the port the
 * console's CSV download streams from (it writes each batch before the next is read).
 */
export async function* exportedAuditEvents(ctx: ServiceContext, query: z.output<typeof auditEventsQuery>): AsyncGenerator<AuditEvent[]> {
  for await (const batch of audit.exportAuditEvents(ctx, { ...query, types: query.type, cursor: undefined, before: undefined })) {
    const names = await audit.clientNamesOf(ctx, batch);
    yield batch.map((e) => presentAuditEvent(e, names));
  }
}

export const createAuditRouter = servingRouter(auditApi);

/** GET /api/auth/activity: the caller's own security events (sign-ins, password and email changes, …). */
export const createActivityRouter = routerOf(() => [
  route(
    {
      method: 'get',
      path: '/activity',
      summary: 'Own security events (sign-ins, password and email changes, sessions, roles), newest first',
      tags: ['Account'],
      auth: 'user',
      query: activityQuery,
      noStore: true,
      response: {
        description:
          '{ events: [{ id, type, occurred_at, actor ("self" | "other" | "system"), client_id, ip, user_agent, detail }], next_cursor }',
        schema: activityBody,
      },
    },
    async ({ query, principal, ctx }) =>
      presentPage(await audit.listOwnActivity(ctx, principal.userId, { cursor: query.cursor, limit: query.limit }), (e) =>
        presentActivity(e, principal.userId),
      ),
  ),
]);

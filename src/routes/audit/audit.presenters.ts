import type { AuditEventRow } from '../../db/repositories/audit-events.repo';
import { presentActor, presentSubject, type AuditPage } from '../../services/audit.service';

/**
 * One event of GET /api/admin/audit-events; fields listed one by one. `clientNames` (audit.clientNamesOf) names the
 * application; a client gone since keeps its id with a null name.
 */
export function presentAuditEvent(e: AuditEventRow, clientNames: ReadonlyMap<string, string> = new Map()) {
  return {
    id: e.id,
    type: e.type,
    occurred_at: e.occurredAt.toISOString(),
    actor_id: e.actorId,
    actor: presentActor(e),
    subject_id: e.subjectId,
    subject: presentSubject(e),
    client_id: e.clientId,
    client: e.clientId === null ? null : { client_id: e.clientId, name: clientNames.get(e.clientId) ?? null },
    ip: e.ip,
    user_agent: e.userAgent,
    request_id: e.requestId,
    detail: e.detail,
  };
}

/**
 * One event of GET /api/auth/activity: what happened, when, from where. Who did it is `self`, `other` (an
 * administrator, whose id is not shown) or `system`.
 */
export function presentActivity(e: AuditEventRow, userId: string) {
  return {
    id: e.id,
    type: e.type,
    occurred_at: e.occurredAt.toISOString(),
    actor: e.actorId === userId ? 'self' : e.actorId ? 'other' : 'system',
    client_id: e.clientId,
    ip: e.ip,
    user_agent: e.userAgent,
    detail: e.detail,
  };
}

export function presentPage<T>(page: AuditPage, present: (e: AuditEventRow) => T) {
  return { events: page.events.map(present), next_cursor: page.nextCursor };
}

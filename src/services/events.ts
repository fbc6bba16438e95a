import { commitOf, type DbOrTrx } from '../db';
import { insertAuditEvents, type NewAuditEvent } from '../db/repositories/audit-events.repo';
import type { Clock } from '../lib/clock';
import { createUnredactedLogger, type Logger } from '../lib/logger';
import type { SecurityEventType } from '../declarations/event-types';

export { SECURITY_EVENT_TYPES, type SecurityEventType } from '../declarations/event-types';

/**
 * The one seam through which services say what happened (ARCHITECTURE "Audit trail and metrics"): a service
 * records an event once, in the transaction of the change; the audit table, log line and metrics each take it. `detail` is small
 * and never carries a secret, password, token, code or hash.
 */

/** The names of the fields a patch sets (the keys whose value is not undefined): a `*.changed` event's `fields`. */
export function changedFields(patch: object): string[] {
  return Object.entries(patch).flatMap(([key, value]) => (value === undefined ? [] : [key]));
}

/** What a service says happened: the audit row's fields (repositories/audit-events.repo.ts) minus its time. */
export interface SecurityEvent extends Omit<NewAuditEvent, 'occurredAt' | 'type'> {
  type: SecurityEventType;
}

/** A consumer that takes what it needs from each recorded event (the log line, the metrics). Never throws. */
export interface EventSink {
  emit(event: SecurityEvent): void;
}

/**
 * The seam services record through (CONTRACT §11: the audit trail is the transactional outbox). `record(db, event)`
 * writes the audit row with `db`: pass the transaction of the change the event records, so the change commits with
 * its event or not at all; outside any transaction pass `ctx.db` and the row is written at once (awaited, a failed
 * write fails the caller). The log line and the metrics follow once the row is durable (after the commit).
 * `origin` (the request's, given by servingEvents) completes what the service did not say itself.
 */
export interface EventBus {
  /** A wrapper of a bus passes `origin` on: the request's bus (servingEvents) gives it, and the event is completed with it. */
  record(db: DbOrTrx, event: SecurityEvent, origin?: RequestOrigin): Promise<void>;
  /** Resolves when the log and metrics of every committed event so far have been taken (tests, shutdown). */
  idle(): Promise<void>;
}

/** Fans one event out to several sinks. */
export function combineSinks(...sinks: EventSink[]): EventSink {
  return {
    emit(event) {
      for (const sink of sinks) sink.emit(event);
    },
  };
}

/** Who is asking: what a security event recorded for a request is completed with (ServedRequest.origin). */
export interface RequestOrigin {
  requestId: string | null;
  ip: string | null;
  userAgent: string | null;
  /** The authenticated caller, once `authenticate` has run: a user id, or a SCIM connection's id. */
  userId: string | null;
  /** `scim_connection` when the caller is a SCIM connection (CONTRACT §20), null for a user. */
  actorType: string | null;
  /** The SCIM connection's name; null for a user. */
  actorName: string | null;
  clientId: string | null;
}

/**
 * The bus of one request's service context (services/context.ts `forRequest`): every event is completed with the
 * request's origin, read when it is recorded (request id, IP, user agent, and the authenticated caller as actor and
 * client). What the service said itself wins; an explicit null (e.g. `actorId: null` for an anonymous sign-in) is kept.
 */
export function servingEvents(bus: EventBus, origin: () => RequestOrigin): EventBus {
  return {
    record: (db, event) => bus.record(db, event, origin()),
    idle: () => bus.idle(),
  };
}

/** Keys a `detail` must never carry; dropped (with a warning in development) rather than stored or logged. */
const SECRET_KEY = /password|secret|token|hash|verifier|^code$|otp|cookie|authorization/i;

/**
 * The event as it is stored and logged, in one object of one shape (issue 33: it was copied twice, about 3 % of a
 * client_credentials grant's CPU): what the service said, else the request's origin (when recorded for a request), else
 * null; an explicit null is kept, and the actor's three fields come together (from the service when it named an actor,
 * else from the origin). Secret-looking `detail` keys are dropped.
 */
export function completeEvent(event: SecurityEvent, origin?: RequestOrigin): SecurityEvent {
  let detail = event.detail;
  if (detail) {
    for (const key in detail) {
      if (SECRET_KEY.test(key)) {
        detail = Object.fromEntries(Object.entries(detail).filter(([name]) => !SECRET_KEY.test(name)));
        break;
      }
    }
  }
  const said = event.actorId !== undefined || origin === undefined;
  return {
    type: event.type,
    actorId: said ? (event.actorId ?? null) : origin.userId,
    actorType: said ? (event.actorType ?? null) : origin.actorType,
    actorName: said ? (event.actorName ?? null) : origin.actorName,
    subjectId: event.subjectId ?? null,
    clientId: event.clientId !== undefined ? event.clientId : (origin?.clientId ?? null),
    ip: event.ip ?? origin?.ip ?? null,
    userAgent: event.userAgent ?? origin?.userAgent ?? null,
    requestId: event.requestId ?? origin?.requestId ?? null,
    detail: detail ?? {},
  };
}

/**
 * The bus: the audit row goes to audit_events with the caller's `db` (one table, the single place rows land, which
 * the webhook outbox reads); `NOT_AUDITED` types skip the row. The sinks (log, metrics) get the event after the
 * commit of the transaction it was recorded in, or at once without one; a rolled-back event reaches neither.
 */
export function createEventBus(options: { clock: Clock; sinks: EventSink[]; notAudited?: ReadonlySet<SecurityEventType> }): EventBus {
  const fanOut = combineSinks(...options.sinks);
  const pending = new Set<Promise<unknown>>();
  return {
    async record(db, event, origin) {
      const complete = completeEvent(event, origin);
      if (!options.notAudited?.has(complete.type)) await insertAuditEvents(db, [{ ...complete, occurredAt: options.clock.now() }]);
      const committed = commitOf(db);
      if (!committed) {
        fanOut.emit(complete);
        return;
      }
      const after = committed.then(
        () => fanOut.emit(complete),
        () => undefined,
      );
      const tracked = after.finally(() => pending.delete(tracked));
      pending.add(tracked);
    },
    async idle() {
      while (pending.size) await Promise.allSettled([...pending]);
    },
  };
}

/**
 * Every security event is logged once, at info, without secrets: completeEvent has dropped every secret-looking
 * `detail` key and the event's own fields are SecurityEvent's, none of which the logger's redaction paths name. So the
 * line is written, like the access log's, by a logger on the same stream without that redaction (which walks every
 * object logged: about 3 % of a client_credentials grant's CPU in its profile, issue 33). The service logger's level
 * decides.
 */
export function createLogEventSink(logger: Logger): EventSink {
  const lines = createUnredactedLogger(logger);
  return {
    emit(event) {
      if (logger.isLevelEnabled('info')) lines.info({ event }, `security event ${event.type}`);
    },
  };
}

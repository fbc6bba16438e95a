import type { NewAuditEvent } from '../db/repositories/audit-events.repo';
import type { Logger } from '../lib/logger';
import { currentRequestOrigin } from '../lib/request-context';

/**
 * The one seam through which services say what happened (ARCHITECTURE "Audit trail and metrics"): a service
 * emits an event once; the sinks (log line, audit table, metrics) each take what they need. `detail` is small
 * and never carries a secret, password, token, code or hash.
 */
export const SECURITY_EVENT_TYPES = [
  'auth.login.succeeded',
  'auth.login.failed',
  'auth.login.throttled',
  'auth.login.mfa_required',
  'auth.login.locked',
  'auth.logout',
  'auth.register',
  'auth.refresh.reuse_detected',
  'auth.password.changed',
  'auth.password.reset',
  'auth.email.verified',
  'auth.email.changed',
  'auth.session.revoked',
  'auth.identity.linked',
  'auth.identity.unlinked',
  'mfa.factor.added',
  'mfa.factor.removed',
  'mfa.recovery_code.used',
  'oauth.token.issued',
  'oauth.code.replayed',
  'oauth.grant.dropped',
  'oauth.client.created',
  'oauth.client.changed',
  'oauth.client.secret_rotated',
  'oauth.client.deactivated',
  'oidc.signing_key_rotated',
  'oidc.logout',
  'idp.provider.created',
  'idp.provider.changed',
  'idp.provider.deleted',
  'user.created',
  'user.changed',
  'user.activated',
  'user.deactivated',
  'role.assigned',
  'role.removed',
  'role.created',
  'role.changed',
  'mail.send_failed',
] as const;

export type SecurityEventType = (typeof SECURITY_EVENT_TYPES)[number];

/** What a service says happened: the audit row's fields (repositories/audit-events.repo.ts) minus its time. */
export interface SecurityEvent extends Omit<NewAuditEvent, 'occurredAt' | 'type'> {
  type: SecurityEventType;
}

export interface EventSink {
  /** Never throws and never blocks the caller; sinks that write do it in the background. */
  emit(event: SecurityEvent): void;
  /** Resolves when everything emitted so far is written (reads of the audit trail, tests, shutdown). */
  idle?(): Promise<void>;
}

/** Fans one event out to several sinks. */
export function combineSinks(...sinks: EventSink[]): EventSink {
  return {
    emit(event) {
      for (const sink of sinks) sink.emit(event);
    },
    async idle() {
      await Promise.all(sinks.map((sink) => sink.idle?.()));
    },
  };
}

/** Keys a `detail` must never carry; dropped (with a warning in development) rather than stored or logged. */
const SECRET_KEY = /password|secret|token|hash|verifier|^code$|otp|cookie|authorization/i;

/**
 * The seam services emit through: fills in what the service did not say from the request being served (request
 * id, IP, user agent, and the authenticated caller as actor and client), drops secret-looking `detail` keys,
 * and fans the event out to the sinks. An explicit null (e.g. `actorId: null` for an anonymous sign-in) is kept.
 */
export function createEventBus(sinks: EventSink[]): EventSink {
  const fanOut = combineSinks(...sinks);
  return {
    emit(event) {
      const origin = currentRequestOrigin();
      let detail = event.detail;
      if (detail && Object.keys(detail).some((key) => SECRET_KEY.test(key))) {
        detail = Object.fromEntries(Object.entries(detail).filter(([key]) => !SECRET_KEY.test(key)));
      }
      fanOut.emit({
        ...event,
        actorId: event.actorId !== undefined ? event.actorId : (origin?.userId ?? null),
        clientId: event.clientId !== undefined ? event.clientId : (origin?.clientId ?? null),
        ip: event.ip ?? origin?.ip ?? null,
        userAgent: event.userAgent ?? origin?.userAgent ?? null,
        requestId: event.requestId ?? origin?.requestId ?? null,
        detail: detail ?? {},
      });
    },
    idle: () => fanOut.idle!(),
  };
}

/** Every security event is logged once, at info, without secrets. */
export function createLogEventSink(logger: Logger): EventSink {
  return {
    emit(event) {
      logger.info({ event: { ...event } }, `security event ${event.type}`);
    },
  };
}

import type { OperatorMetrics, SIGN_IN_OUTCOMES } from '../lib/metrics';
import type { EventSink } from './events';

export { NOT_AUDITED } from '../declarations/event-types';

/** Label values must stay a small set: an unexpected grant type is counted as `other`. */
const LABEL_VALUE = /^[A-Za-z0-9_:.-]{1,100}$/;

/** The sign-in events, and the outcome each is counted as in sso_sign_ins_total. */
const SIGN_IN_OUTCOME = new Map<string, (typeof SIGN_IN_OUTCOMES)[number]>([
  ['auth.login.succeeded', 'success'],
  ['auth.login.failed', 'bad_password'],
  ['auth.login.throttled', 'throttled'],
  ['auth.login.mfa_required', 'mfa_required'],
]);

/** Counts what an operator alerts on (lib/metrics.ts names them). */
export function createMetricsEventSink(metrics: OperatorMetrics): EventSink {
  return {
    emit(event) {
      metrics.securityEvents.inc({ type: event.type });
      const outcome = SIGN_IN_OUTCOME.get(event.type);
      if (outcome) metrics.signIns.inc({ outcome });
      switch (event.type) {
        case 'auth.login.succeeded':
          metrics.tokensIssued.inc({ grant_type: 'password' });
          break;
        case 'auth.login.locked':
          metrics.lockouts.inc();
          break;
        case 'auth.register':
          metrics.tokensIssued.inc({ grant_type: 'registration' });
          break;
        case 'oauth.token.issued': {
          const grant = event.detail?.grant_type;
          metrics.tokensIssued.inc({ grant_type: typeof grant === 'string' && LABEL_VALUE.test(grant) ? grant : 'other' });
          break;
        }
        case 'auth.refresh.reuse_detected':
          metrics.refreshReuse.inc();
          break;
        case 'oauth.code.replayed':
          metrics.codeReplays.inc();
          break;
        case 'mail.send_failed':
          metrics.mailFailures.inc();
          break;
        default:
          break;
      }
    },
  };
}

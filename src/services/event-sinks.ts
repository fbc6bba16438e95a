import type { OperatorMetrics } from '../lib/metrics';
import type { EventSink } from './events';

export { NOT_AUDITED } from '../declarations/event-types';

/** Label values must stay a small set: an unexpected grant type is counted as `other`. */
const LABEL_VALUE = /^[A-Za-z0-9_:.-]{1,100}$/;

/** Counts what an operator alerts on (lib/metrics.ts names them). */
export function createMetricsEventSink(metrics: OperatorMetrics): EventSink {
  return {
    emit(event) {
      metrics.securityEvents.inc({ type: event.type });
      switch (event.type) {
        case 'auth.login.succeeded':
          metrics.signIns.inc({ outcome: 'success' });
          metrics.tokensIssued.inc({ grant_type: 'password' });
          break;
        case 'auth.login.failed':
          metrics.signIns.inc({ outcome: 'bad_password' });
          break;
        case 'auth.login.throttled':
          metrics.signIns.inc({ outcome: 'throttled' });
          break;
        case 'auth.login.mfa_required':
          metrics.signIns.inc({ outcome: 'mfa_required' });
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

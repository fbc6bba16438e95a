import type { RouteSeries } from '../lib/metrics';
import type { PageEnv } from '../middleware/page-env';
import type { Principal } from '../services/principal';
import type { ScimConnectionRow } from '../db/repositories/scim.repo';
import type { ServiceContext } from '../services/context';

declare global {
  namespace Express {
    interface Request {
      /** Set by `authenticate`: the caller with live roles and permissions. */
      principal?: Principal;
      /** Set by the SCIM scope's authentication: the SCIM connection whose bearer token was sent (CONTRACT §20). */
      scimConnection?: ScimConnectionRow;
      /** How the caller authenticated. */
      authMethod?: 'cookie' | 'bearer';
      /** Request id (X-Request-Id), set by middleware/request-log.ts. */
      id: string | number | object;
      /**
       * The duration series of the declared route the app's router matched (src/http/dispatch.ts); `undefined` when
       * none did. Set to `undefined` by the global step on every request, so every request object has the same shape.
       */
      routeSeries: RouteSeries | undefined;
      /**
       * `performance.now()` when the global step saw the request (middleware/global-step.ts), so that a rule about the
       * request's arrival (the code exchange's replay rule) is not moved by what ran before it (client authentication).
       */
      arrivedAt?: number;
      /** Language and branding of the pages and mails this request renders (middleware/page-env.ts). */
      pageEnv?: PageEnv;
      /**
       * The service context of this request (src/middleware/request-context.ts `contextOf`), made on first use. Set to
       * `undefined` by the global step, so every request object has the same shape.
       */
      serviceContext: ServiceContext | undefined;
    }
  }
}

export {};

import type { PageEnv } from '../middleware/page-env';
import type { Principal } from '../services/principal';

declare global {
  namespace Express {
    interface Request {
      /** Set by `authenticate`: the caller with live roles and permissions. */
      principal?: Principal;
      /** How the caller authenticated. */
      authMethod?: 'cookie' | 'bearer';
      /** Request id (X-Request-Id), set by middleware/request-log.ts. */
      id: string | number | object;
      /** Language and branding of the pages and mails this request renders (middleware/page-env.ts). */
      pageEnv?: PageEnv;
    }
  }
}

export {};

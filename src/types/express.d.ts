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
    }
  }
}

export {};

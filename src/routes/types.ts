import type { RequestHandler } from 'express';
import type { Authenticate } from '../middleware/authenticate';
import type { ServiceContext } from '../services/context';

/** What every router factory receives. */
export interface RouteDeps {
  ctx: ServiceContext;
  authenticate: Authenticate;
  /** The app's per-IP limiter, for routes outside /api that declare `rateLimit` (the hosted sign-in form). */
  rateLimit?: RequestHandler;
}

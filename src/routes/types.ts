import type { RequestHandler } from 'express';
import type { Authenticate } from '../middleware/authenticate';
import type { ServiceContext } from '../services/context';
import type { ScopeSteps } from './scope';

/** What every router factory receives. */
export interface RouteDeps {
  ctx: ServiceContext;
  authenticate: Authenticate;
  /** The per-IP limiter for routes that declare `rateLimit` (the hosted forms: pages, whose scope answers 429 as a page). */
  rateLimit?: RequestHandler;
  /** The per-IP budget of dynamic client registration (CONTRACT §13), for routes that declare `rateLimit: 'registration'`. */
  registrationRateLimit?: RequestHandler;
  /** The scope the router is mounted in (src/routes/scope.ts): its steps, dialect and policy; none outside an app. */
  scope?: ScopeSteps;
}

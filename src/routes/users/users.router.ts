import { Router } from 'express';
import type { RouteDeps } from '../types';

/** Users (spec §4.4) - issue 3 (not built yet). */
export function createUsersRouter(_deps: RouteDeps): Router {
  return Router();
}

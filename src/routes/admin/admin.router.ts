import { Router } from 'express';
import type { RouteDeps } from '../types';

/** OAuth-client administration and summary (spec §4.6) - issue 3 (not built yet). */
export function createAdminRouter(_deps: RouteDeps): Router {
  return Router();
}

import { Router } from 'express';
import type { RouteDeps } from '../types';

/** Connected apps and the legacy /authorize redirect - issue 4 (not built yet). */
export function createAppsRouter(_deps: RouteDeps): Router {
  return Router();
}

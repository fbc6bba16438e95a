import { Router } from 'express';
import type { RouteDeps } from '../types';

/** RBAC (spec §4.5) - issue 3 (not built yet). */
export function createRbacRouter(_deps: RouteDeps): Router {
  return Router();
}

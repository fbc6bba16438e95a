import { Router } from 'express';
import type { RouteDeps } from '../types';

/** /verify-email and /set-password pages - issue 5 (not built yet). */
export function createAccountPagesRouter(_deps: RouteDeps): Router {
  return Router();
}

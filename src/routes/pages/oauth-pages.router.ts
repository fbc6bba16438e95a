import { Router } from 'express';
import type { RouteDeps } from '../types';

/** /login and /consent pages - issue 4 (not built yet). */
export function createOAuthPagesRouter(_deps: RouteDeps): Router {
  return Router();
}

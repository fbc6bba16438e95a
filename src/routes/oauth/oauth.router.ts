import { Router } from 'express';
import type { RouteDeps } from '../types';

/** OAuth 2.0 endpoints (spec §4.3) - issue 4 (not built yet). */
export function createOAuthRouter(_deps: RouteDeps): Router {
  return Router();
}

/** Discovery document at /.well-known - issue 4 (not built yet). */
export function createDiscoveryRouter(_deps: RouteDeps): Router {
  return Router();
}

import { Router } from 'express';
import type { RouteDeps } from '../types';

/** Account self-service: sessions, password, email links, login targets - issue 5 (not built yet). */
export function createAccountRouter(_deps: RouteDeps): Router {
  return Router();
}

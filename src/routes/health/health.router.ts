import { Router } from 'express';
import { pingDatabase } from '../../db';
import type { RouteDeps } from '../types';

const HEALTH_TIMEOUT_MS = 1500;

/** GET /health: 200 {status:"OK"} when `select 1` succeeds within the timeout, else 503 (spec §4.1). */
export function createHealthRouter({ ctx }: RouteDeps): Router {
  const router = Router();
  router.get('/', async (_req, res) => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), HEALTH_TIMEOUT_MS);
    });
    const probe = pingDatabase(ctx.db)
      .then(() => true)
      .catch(() => false);
    const ok = await Promise.race([probe, timeout]);
    clearTimeout(timer);
    res.set('Cache-Control', 'no-store');
    if (ok) res.json({ status: 'OK' });
    else res.status(503).json({ status: 'unavailable', error: 'service_unavailable', message: 'Database unreachable' });
  });
  return router;
}

import { z } from 'zod';
import { pingDatabase } from '../../db';
import { declareRouter, reply, route } from '../route';
import type { RouteDeps } from '../types';

const HEALTH_TIMEOUT_MS = 1500;

const healthBody = z.strictObject({ status: z.literal('OK') });

/** GET /health: 200 {status:"OK"} when `select 1` succeeds within the timeout, else 503 (spec §4.1). */
export function createHealthRouter(deps: RouteDeps) {
  const { ctx } = deps;
  return declareRouter(deps, [
    route(
      {
        method: 'get',
        path: '/',
        summary: 'Liveness with a database probe',
        tags: ['Health'],
        auth: 'none',
        noStore: true,
        response: { description: '{ status: "OK" }', schema: healthBody },
        errors: [503],
      },
      async () => {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<false>((resolve) => {
          timer = setTimeout(() => resolve(false), HEALTH_TIMEOUT_MS);
        });
        const probe = pingDatabase(ctx.db)
          .then(() => true)
          .catch(() => false);
        const ok = await Promise.race([probe, timeout]);
        clearTimeout(timer);
        if (ok) return { status: 'OK' };
        return reply(503, { status: 'unavailable', error: 'service_unavailable', message: 'Database unreachable' });
      },
    ),
  ]);
}

import { z } from 'zod';
import { createHealthProbe } from '../../services/health.service';
import { reply, route, routerOf } from '../route';

const healthBody = z.strictObject({ status: z.literal('OK') });
const UP = { status: 'OK' };
const answer = (ok: boolean) =>
  ok ? UP : reply(503, { status: 'unavailable', error: 'service_unavailable', message: 'Database unreachable' });

/**
 * GET /health: 200 {status:"OK"} when the database answered a `select 1` probe started at most 1 s ago, else 503
 * (spec §4.1). Concurrent requests share one probe (services/health.service.ts). Mounted in the documents scope (no
 * step but CORS): load balancers poll it.
 */
export const createHealthRouter = routerOf((app) => {
  const probe = createHealthProbe(app.db);
  return [
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
      // A young enough probe result answers at once (no promise, no microtask: the route adapter writes a plain value
      // in the same turn); only a request that must wait for a probe gets a promise.
      () => {
        const ok = probe.fresh();
        return ok === undefined ? probe.check().then(answer) : answer(ok);
      },
    ),
  ];
});

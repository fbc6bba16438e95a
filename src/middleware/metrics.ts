import type { Request, RequestHandler } from 'express';
import { Histogram, type Registry } from 'prom-client';
import { safeEqual } from '../lib/crypto';
import { RouteSeries, type OperatorMetrics } from '../lib/metrics';

export interface Metrics {
  registry: Registry;
  /**
   * Records one finished request, labelled by route pattern (never the raw URL, which may carry ids or tokens): called
   * by the app's global step (middleware/global-step.ts) when the answer is finished.
   */
  record(req: Request, status: number, seconds: number): void;
}

/** The request histogram, on the registry of the operator metrics (lib/metrics.ts), which also counts 429s. */
export function createMetrics(operator: OperatorMetrics): Metrics {
  const { registry } = operator;
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by method, route and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  // Requests no route matched: one series per method and status.
  const unmatched = new RouteSeries(UNMATCHED_ROUTE);
  const record = (req: Request, status: number, seconds: number) => {
    (req.routeSeries ?? unmatched).child(duration, req.method, status).observe(seconds);
    if (status === 429) operator.rateLimited.inc();
  };
  return { registry, record };
}

/** The label of every request no route matched (404s, probes of random paths): one series, whatever the path. */
export const UNMATCHED_ROUTE = 'unmatched';

/** GET /metrics (Prometheus text) behind `Authorization: Bearer METRICS_TOKEN`; 404 when no token is set. */
export function metricsEndpoint(metrics: Metrics, token: string | undefined): RequestHandler {
  return async (req, res, next) => {
    if (!token) return next();
    const presented = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? '';
    if (!safeEqual(presented, token)) {
      res.set('WWW-Authenticate', 'Bearer').status(401).json({ error: 'unauthorized', message: 'Metrics token required' });
      return;
    }
    res.set('Content-Type', metrics.registry.contentType).send(await metrics.registry.metrics());
  };
}

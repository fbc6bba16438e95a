import type { Request, RequestHandler } from 'express';
import { Router } from 'express';
import { Histogram, type Registry } from 'prom-client';
import { safeEqual } from '../lib/crypto';
import type { OperatorMetrics } from '../lib/metrics';

export interface Metrics {
  registry: Registry;
  /** Times every request, labelled by route pattern (never the raw URL, which may carry ids or tokens). */
  middleware: RequestHandler;
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
  // One pre-bound child per label set: an observation is a map lookup and an increment, no label object to hash.
  const children = new Map<string, ReturnType<typeof duration.labels>>();
  const observe = (method: string, route: string, status: number, seconds: number) => {
    const key = `${method} ${status} ${route}`;
    let child = children.get(key);
    if (!child) {
      child = duration.labels(method, route, String(status));
      children.set(key, child);
    }
    child.observe(seconds);
  };
  const middleware: RequestHandler = (req, res, next) => {
    const started = performance.now();
    res.once('finish', () => {
      observe(req.method, routeLabel(req), res.statusCode, (performance.now() - started) / 1000);
      if (res.statusCode === 429) operator.rateLimited.inc();
    });
    next();
  };
  return { registry, middleware };
}

const ID_SEGMENT = /^[0-9a-f-]{36}$|^\d+$|^[A-Za-z0-9_-]{20,}$/i;
/** Labels of recently seen paths; cleared when full, so ids in paths cannot grow it without bound. */
const labelCache = new Map<string, string>();
const LABEL_CACHE_MAX = 1000;

/**
 * The matched path with identifiers folded to `:id`, so that label cardinality stays bounded (Express resets
 * req.baseUrl once the router is left, so the mount path cannot be read back at 'finish').
 */
function routeLabel(req: Request): string {
  if (!req.route) return 'unmatched';
  const url = req.originalUrl;
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  let label = labelCache.get(path);
  if (label === undefined) {
    label = path
      .split('/')
      .map((segment) => (ID_SEGMENT.test(segment) ? ':id' : segment))
      .join('/');
    if (labelCache.size >= LABEL_CACHE_MAX) labelCache.clear();
    labelCache.set(path, label);
  }
  return label;
}

/** GET /metrics (Prometheus text) behind `Authorization: Bearer METRICS_TOKEN`; 404 when no token is set. */
export function createMetricsRouter(metrics: Metrics, token: string | undefined): Router {
  const router = Router();
  router.get('/', async (req, res, next) => {
    if (!token) return next();
    const presented = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? '';
    if (!safeEqual(presented, token)) {
      res.set('WWW-Authenticate', 'Bearer').status(401).json({ error: 'unauthorized', message: 'Metrics token required' });
      return;
    }
    res.set('Content-Type', metrics.registry.contentType).send(await metrics.registry.metrics());
  });
  return router;
}

import { Histogram, Registry } from 'prom-client';
import { RouteHistogram, RouteSeries } from '../../src/lib/metrics';

/**
 * The request histogram (src/lib/metrics.ts): observations go to cells made once per route, method and status, and
 * the registry renders exactly what prom-client's own Histogram renders for the same observations.
 */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const OBSERVATIONS: Array<[string, string, number, number]> = [
  ['GET', '/health', 200, 0.001],
  ['GET', '/api/auth/me', 200, 0.012],
  ['GET', '/health', 200, 0.0049],
  ['POST', '/api/oauth/token', 400, 0.3],
  ['GET', '/api/auth/me', 401, 3.2],
  ['GET', '/api/auth/me', 200, 0.005],
  ['GET', '/health', 503, 2.5],
  ['POST', '/api/oauth/token', 400, 0.1000001],
];

function both() {
  const ours = new Registry();
  const theirs = new Registry();
  const histogram = new RouteHistogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration',
    buckets: BUCKETS,
    registers: [ours],
  });
  const reference = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration',
    labelNames: ['method', 'route', 'status'],
    buckets: BUCKETS,
    registers: [theirs],
  });
  const series = new Map<string, RouteSeries>();
  for (const [method, route, status, seconds] of OBSERVATIONS) {
    if (!series.has(route)) series.set(route, new RouteSeries(route));
    series.get(route)!.child(histogram, method, status).observe(seconds);
    reference.labels(method, route, String(status)).observe(seconds);
  }
  return { ours, theirs, histogram, reference };
}

test('the registry renders the same text and JSON as prom-client Histogram for the same observations', async () => {
  const { ours, theirs } = both();
  const text = await ours.metrics();
  expect(text).toBe(await theirs.metrics());
  expect(text).toContain('http_request_duration_seconds_bucket{le="0.005",method="GET",route="/health",status="200"} 2');
  expect(text).toContain('http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/api/auth/me",status="401"} 1');
  expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
});

test('one cell per route, method and status; a reset empties every series as prom-client does', async () => {
  const { ours, theirs, histogram, reference } = both();
  const again = new RouteSeries('/health');
  expect(again.child(histogram, 'GET', 200)).toBe(again.child(histogram, 'GET', 200));
  histogram.reset();
  reference.reset();
  const text = await ours.metrics();
  expect(text).not.toContain('route="/api/auth/me"} 1');
  expect(text).toContain('http_request_duration_seconds_count{method="GET",route="/health",status="200"} 0');
  // prom-client forgets its series on reset; ours keep theirs at zero (bounded by the declared routes).
  expect(await theirs.metrics()).not.toContain('route="/health"');
});

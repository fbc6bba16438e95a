import cors from 'cors';
import express, { type Express, type RequestHandler } from 'express';
import { createAuthenticate, resolvePrincipal } from './middleware/authenticate';
import { installLazyCookies } from './middleware/cookies';
import { createErrorHandler, notFoundHandler } from './middleware/error-handler';
import { createMetrics, createMetricsRouter } from './middleware/metrics';
import { originCheck } from './middleware/origin-check';
import { createRateLimit, laneRateLimit } from './middleware/rate-limit';
import { installPublicLane } from './middleware/public-lane';
import { createAccessLog } from './middleware/request-log';
import { recordSecurityHeaders, securityHeaderOptions, securityHeaders } from './middleware/security-headers';
import { AppError } from './errors';
import { requestContext } from './lib/request-context';
import { pageEnvironment } from './middleware/page-env';
import { mountPublicDocuments, mountRoutes } from './routes';
import type { ServiceContext } from './services/context';

export interface AppDeps {
  ctx: ServiceContext;
  /** The /api/* limiter; default an in-memory one built from config (server.ts passes the Redis-backed one). */
  rateLimit?: RequestHandler;
}

/** CONTRACT §8: at most this many query or form parameters; more is a 4xx, never silently truncated. */
const MAX_PARAMETERS = 1000;

/**
 * The query parser would silently drop parameters past its limit (and its work grows with their number): more
 * than MAX_PARAMETERS `&`-separated pairs answer 400 before anything parses them.
 */
const limitQueryParameters: RequestHandler = (req, _res, next) => {
  const q = req.url.indexOf('?');
  if (q < 0) return next();
  let pairs = 1;
  for (let i = req.url.indexOf('&', q); i !== -1; i = req.url.indexOf('&', i + 1)) {
    if (++pairs > MAX_PARAMETERS) return next(new AppError('validation_error', `Too many query parameters (at most ${MAX_PARAMETERS})`));
  }
  next();
};

/**
 * RFC 9700 §2.6 / CONTRACT §8: CORS headers only on the JSON API (and discovery, health), never on the authorization
 * endpoints or HTML pages, whatever the origin: a page or an authorize redirect must not be readable cross-origin.
 * Paths compare case-insensitively, as Express routes them.
 */
export function corsAppliesTo(path: string): boolean {
  const p = path.toLowerCase();
  if (/^\/api\/(oauth|auth)\/authorize\/?$/.test(p)) return false;
  if (p === '/api/docs' || p.startsWith('/api/docs/')) return false;
  return p.startsWith('/api/') || p.startsWith('/.well-known/') || p === '/health' || p.startsWith('/health/');
}

/** Builds the Express app: global middleware, the URL map, 404 and the single error handler. */
export function createApp(deps: AppDeps): Express {
  const { ctx } = deps;
  const { config } = ctx;
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  // No ETag: the answers are per-caller and mostly no-store, so a SHA-1 of every JSON body buys no revalidation.
  app.set('etag', false);
  if (config.trustProxy !== undefined) app.set('trust proxy', config.trustProxy);

  const metrics = createMetrics(ctx.metrics);
  metrics.install(app);
  app.use(metrics.middleware);
  app.use('/metrics', createMetricsRouter(metrics, config.metricsToken));
  app.use(limitQueryParameters);

  const accessLog = createAccessLog(ctx.logger);
  app.use(accessLog.middleware);

  const recordedHeaders = recordSecurityHeaders(securityHeaderOptions(config.baseUrl, config.brand.logoUrl ? [new URL(config.brand.logoUrl).origin] : []));
  app.use(securityHeaders(recordedHeaders));

  const allowedOrigins = new Set(config.allowedOrigins);
  const corsHeaders = cors<express.Request>((req, callback) => {
    const origin = req.headers.origin;
    // Unlisted origins get no CORS headers.
    if (origin && allowedOrigins.has(origin) && corsAppliesTo(req.path)) callback(null, { origin, credentials: true, maxAge: 600 });
    else callback(null, { origin: false });
  });
  // No Origin: command-line tools and servers, always allowed, and nothing for CORS to answer.
  app.use((req, res, next) => (req.headers.origin === undefined ? next() : corsHeaders(req, res, next)));

  // One limiter for /api and the lane's authenticated routes, counting each request once (LaneRateLimit).
  const limiter = laneRateLimit(deps.rateLimit ?? createRateLimit(config));
  const rateLimit = limiter.middleware;
  const routeDeps = { ctx, authenticate: createAuthenticate(ctx), rateLimit };
  mountPublicDocuments(app, routeDeps);

  installLazyCookies(app);
  app.use(express.json({ limit: '100kb' }));
  app.use(express.urlencoded({ extended: false, limit: '100kb', parameterLimit: MAX_PARAMETERS }));
  // After the body parsers (their stream callbacks would lose it): security events learn the request id, IP,
  // user agent and caller from here (lib/request-context.ts).
  app.use(requestContext);
  app.use(pageEnvironment(config));
  app.use('/api', rateLimit);
  app.use(originCheck(config));

  // Routes outside /api that need the same budget (the hosted sign-in form) declare `rateLimit` on their line.
  mountRoutes(app, routeDeps);

  app.use(notFoundHandler);
  app.use(createErrorHandler(ctx.logger, config));
  installPublicLane(app, {
    metrics,
    accessLog,
    securityHeaders: recordedHeaders,
    api: { rateLimit: limiter, resolvePrincipal: (token) => resolvePrincipal(ctx, token), trustProxy: () => app.get('trust proxy fn') as (address: string, hop: number) => boolean },
  });
  return app;
}

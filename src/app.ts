import cors from 'cors';
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import { createAuthenticate } from './middleware/authenticate';
import { installLazyCookies } from './middleware/cookies';
import { createErrorHandler, notFoundHandler } from './middleware/error-handler';
import { renderErrorPage } from './views/errors';
import { createMetrics, metricsEndpoint } from './middleware/metrics';
import { originCheck } from './middleware/origin-check';
import { createRateLimit, createRegistrationRateLimit } from './middleware/rate-limit';
import { createAccessLog } from './middleware/request-log';
import { recordSecurityHeaders, securityHeaderOptions } from './middleware/security-headers';
import { createGlobalStep } from './middleware/global-step';
import { installLazyPageEnv } from './middleware/page-env';
import { mountRoutes, type Scopes } from './routes';
import { mountConsole } from './console';
import { oauthDialect } from './routes/oauth/oauth-errors';
import { consoleRefusals } from './routes/console/console-kit';
import { pageErrors } from './routes/pages/page-errors';
import { scimDialect } from './routes/scim/scim-errors';
import { AppError, ScimProblem } from './errors';
import { registerRouteTable, type DeclaredAppRoute } from './routes/route-table';
import { Scope } from './routes/scope';
import { Dispatcher } from './http/dispatch';
import { installPipeline } from './http/pipeline';
import type { ServiceContext } from './services/context';
import { derived } from './services/settings/live-settings';
import { clientOrigins } from './services/oauth/client-origins';
import { pageEnvOutsideRequests } from './views/env';

export interface AppDeps {
  ctx: ServiceContext;
  /** The per-IP limiter; default an in-memory one built from config (server.ts passes the Redis-backed one). */
  rateLimit?: RequestHandler;
  /** The per-IP budget of dynamic client registration (CONTRACT §13); default in memory, like `rateLimit`. */
  registrationRateLimit?: RequestHandler;
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
 * The scopes of the app (issue 22: node-oidc-provider's per-route step lists in Express): documents, /api (with its
 * OAuth protocol and administration scopes) and pages, each mounted with exactly the steps it needs. A scope's steps
 * run inside each of its routes, so a request runs those of one scope, once. `finish` closes the scopes: requests no
 * route matched (under /api: counted by the limiter, as every /api request is) end in 404, then the one error handler.
 * Exported for tests that mount a router of their own in a scope (what a new route gets without declaring it).
 */
export function createScopes(app: Express, deps: AppDeps): { scopes: Scopes; finish: () => void; router: Dispatcher } {
  const { ctx } = deps;
  const { config } = ctx;
  pageEnvOutsideRequests(
    config.nodeEnv === 'test'
      ? 'throw'
      : (error) => ctx.logger.warn({ err: error }, 'a page was drawn partly in English: its words were read outside its request'),
  );
  const table: DeclaredAppRoute[] = [];
  registerRouteTable(app, table);
  const limiter = deps.rateLimit ?? createRateLimit(config);
  // A route that declares `rateLimit: 'registration'` runs this budget besides its scope's steps.
  const registrationRateLimit = deps.registrationRateLimit ?? createRegistrationRateLimit(config);
  const base = {
    ctx,
    serviceContext: ctx,
    authenticate: createAuthenticate(ctx),
    registrationRateLimit,
    clientOrigins: clientOrigins(ctx),
  };

  // RFC 9700 §2.6 / CONTRACT §8: CORS headers only for allow-listed origins, on the JSON API and the documents, never on
  // pages or browser redirects (their routes declare `cors: false`). No Origin (command-line tools, servers): nothing
  // for CORS to answer.
  const { settings } = ctx;
  const corsHeaders = cors<express.Request>((req, callback) => {
    const origin = req.headers.origin;
    // CONTRACT §18: allowed_origins in force now (an in-memory set, replaced when the setting changes).
    if (origin && settings.current.allowedOrigins.has(origin)) callback(null, { origin, credentials: true, maxAge: 600 });
    else callback(null, { origin: false });
  });
  const corsStep: RequestHandler = (req, res, next) => (req.headers.origin === undefined ? next() : corsHeaders(req, res, next));

  const json = express.json({ limit: '100kb' });
  const form = express.urlencoded({ extended: false, limit: '100kb', parameterLimit: MAX_PARAMETERS });
  const origins = originCheck(config, settings);
  // Security events learn the request id, IP, user agent and caller from the request's service context, which every
  // handler gets in its input (`ctx`, middleware/request-context.ts) and hands to the services it calls.
  // The language and brand of pages and mails (CONTRACT §15), chosen on first read, in a handler, so after the body
  // parsers (ui_locales may be in the body): an API call that sends a mail (registration, password reset) mails in its
  // caller's language, and one that renders nothing pays nothing.
  installLazyPageEnv(app, settings);
  const apiSteps = [limitQueryParameters, limiter, json, form, origins];
  const pageSteps = [limitQueryParameters, form, origins];

  // The app's one router (src/http/dispatch.ts), mounted now: every scope adds its routes to it (mountRoutes and mountConsole, after
  // this), each with its whole chain, so a request runs the steps of its route's scope only, once.
  const router = new Dispatcher();
  app.use(router.handle);
  const documents = new Scope(router, '', { cors: corsStep }, table, base);
  const api = new Scope(router, '/api', { steps: apiSteps, cors: corsStep }, table, base);
  // Routes outside /api that need the per-IP budget (the hosted forms) declare `rateLimit`; the boundary answers 429
  // with a page.
  const pages = new Scope(router, '', { steps: pageSteps, boundary: pageErrors }, table, { ...base, rateLimit: limiter });
  // The console answers its refusals as console pages (sign-in redirect, 403 and 404 pages), the rest as any page.
  const consoleErrors = consoleRefusals(config);
  const consoleBoundary: ErrorRequestHandler = (err, req, res, next) =>
    consoleErrors(err, req, res, (rest?: unknown) => pageErrors(rest ?? err, req, res, next));

  // SCIM 2.0 (CONTRACT §20): its own mount and dialect. Directories send application/scim+json; a large group's PUT
  // is bigger than an API body. No per-IP limiter: a directory pushes from a shared cloud address far more than 300
  // requests in 15 minutes, and every route needs a connection's 256-bit token (docs/scim.md).
  const scimJson = express.json({ limit: '1mb', type: ['application/json', 'application/scim+json', 'application/*+json'] });
  const scim = new Scope(router, '/scim/v2', { steps: [limitQueryParameters, scimJson], boundary: scimDialect }, table, base);

  const scopes: Scopes = {
    documents,
    apiDocuments: documents.with({ steps: [limiter] }),
    api,
    oauthProtocol: api.with({ boundary: oauthDialect, dialect: 'oauth' }),
    administration: api.with({ secondFactorForAdmins: true }),
    pages,
    consolePages: pages.with({ secondFactorForAdmins: true, boundary: consoleBoundary }),
    scim,
  };
  const finish = () => {
    // What no route matched: under /api counted by the limiter like every /api request, then 404.
    router.fallback('/api', [limiter, notFoundHandler]);
    const noScimEndpoint: RequestHandler = (req, _res, next) => next(new ScimProblem(404, `No SCIM endpoint ${req.method} ${req.path}`));
    router.fallback('/scim/v2', [noScimEndpoint]);
    app.use(notFoundHandler);
    app.use(createErrorHandler(ctx.logger, ctx.settings, renderErrorPage));
  };
  return { scopes, finish, router };
}

/**
 * Builds the Express app: the global steps every answer needs (duration histogram, request id and access log,
 * security headers), the scopes with their routes, 404 and the single error handler.
 */
export function createApp(deps: AppDeps): Express {
  const { ctx } = deps;
  const { config } = ctx;
  const app = express();
  // Every request goes the one way: the steps mounted below, in order (src/http/pipeline.ts).
  installPipeline(app);
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  // No ETag: the answers are per-caller and mostly no-store, so a SHA-1 of every JSON body buys no revalidation.
  app.set('etag', false);
  if (config.trustProxy !== undefined) app.set('trust proxy', config.trustProxy);
  // `req.cookies` is parsed on first read (session cookies, CSRF, the origin check); routes that never read it pay nothing.
  installLazyCookies(app);

  const metrics = createMetrics(ctx.metrics);
  // The CSP's img-src names brand_logo_url's origin: recorded again when the settings change, not per request.
  const headers = derived(ctx.settings, ({ brand }) =>
    recordSecurityHeaders(securityHeaderOptions(config.baseUrl, brand.logoUrl ? [new URL(brand.logoUrl).origin] : [])),
  );
  app.use(createGlobalStep({ metrics, accessLog: createAccessLog(ctx.logger), headers }));

  const { scopes, finish, router } = createScopes(app, deps);
  router.on('get', '/metrics', '/metrics', [metricsEndpoint(metrics, config.metricsToken)]);
  mountRoutes(scopes);
  mountConsole(scopes.consolePages);
  finish();
  return app;
}

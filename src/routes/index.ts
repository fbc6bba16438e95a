import type { Express } from 'express';
import { createAdminRouter } from './admin/admin.router';
import { createAccountRouter } from './auth/account.router';
import { createActivityRouter, createAuditRouter } from './audit/audit.router';
import { createAppsRouter } from './auth/apps.router';
import { createAuthRouter } from './auth/auth.router';
import { createMfaRouter } from './auth/mfa.router';
import { createDocsRouter } from './docs/docs.router';
import { createFederationRouter } from './federation/federation.router';
import { createIdentityProvidersRouter } from './federation/identity-providers.router';
import { createHealthRouter } from './health/health.router';
import { oauthErrorBoundary } from './oauth/oauth-errors';
import { createDiscoveryRouter, createOAuthRouter } from './oauth/oauth.router';
import { createOidcDiscoveryRouter, createOidcRouter } from './oauth/oidc.router';
import { createConsoleRouter } from './console/console.router';
import { createAccountPagesRouter } from './pages/account-pages.router';
import { createDevicePagesRouter } from './pages/device-pages.router';
import { createMfaPagesRouter } from './pages/mfa-pages.router';
import { createOAuthPagesRouter } from './pages/oauth-pages.router';
import { createSetupPagesRouter } from './pages/setup-pages.router';
import { createRegisterPagesRouter } from './pages/register-pages.router';
import { createSelfServicePagesRouter } from './pages/self-service-pages.router';
import { createFaviconRouter, createStaticRouter } from './pages/static.router';
import { createRbacRouter } from './rbac/rbac.router';
import type { RouteDeps } from './types';
import { createUsersRouter } from './users/users.router';
import { createWebhooksRouter } from './webhooks/webhooks.router';

/**
 * The documents polled most, by load balancers and relying parties: GET only, no body, no cookie, no session, no
 * security event, outside /api (so outside its rate limit). createApp mounts them before the body parsers, the
 * request context and the origin check, none of which they need (issue 10: a probe storm costs as little as it can).
 */
export function mountPublicDocuments(app: Express, deps: RouteDeps): void {
  app.use('/health', createHealthRouter(deps));
  // RFC 8414 location, beyond the spec's /api/oauth/.well-known path (CONTRACT §5).
  app.use('/.well-known', createDiscoveryRouter(deps));
  // OpenID Connect Discovery 1.0 §4 (CONTRACT §9).
  app.use('/.well-known', createOidcDiscoveryRouter(deps));
}

/**
 * The one URL map of the service: where each router mounts. What each route requires, accepts and answers is its
 * declaration (src/routes/route.ts), which the OpenAPI document and the permission matrix read back from the app.
 */
export function mountRoutes(app: Express, deps: RouteDeps): void {
  app.use('/api/auth', createAuthRouter(deps));
  app.use('/api/auth', createAccountRouter(deps));
  app.use('/api/auth', createAppsRouter(deps));
  app.use('/api/auth', createActivityRouter(deps));
  app.use('/api/auth', createFederationRouter(deps));
  // The OAuth protocol endpoints answer in RFC 6749's dialect: their errors, raised inside the router or before it
  // (rate limit, body parser), are translated at the router's boundary.
  const oauth = createOAuthRouter(deps);
  app.use('/api/oauth', oauth, oauthErrorBoundary(oauth));
  const oidc = createOidcRouter(deps);
  app.use('/api/oauth', oidc, oauthErrorBoundary(oidc));
  app.use('/api/auth', createMfaRouter(deps));
  app.use('/api/users', createUsersRouter(deps));
  app.use('/api/rbac', createRbacRouter(deps));
  app.use('/api/admin', createAuditRouter(deps));
  app.use('/api/admin', createAdminRouter(deps));
  app.use('/api/admin', createWebhooksRouter(deps));
  app.use('/api/admin', createIdentityProvidersRouter(deps));
  app.use('/api', createDocsRouter(deps));

  app.use('/static', createStaticRouter(deps));
  app.use('/', createFaviconRouter(deps));
  app.use('/', createOAuthPagesRouter(deps));
  app.use('/', createMfaPagesRouter(deps));
  app.use('/', createSelfServicePagesRouter(deps));
  app.use('/', createAccountPagesRouter(deps));
  app.use('/', createSetupPagesRouter(deps));
  app.use('/', createDevicePagesRouter(deps));
  app.use('/', createRegisterPagesRouter(deps));
  app.use('/admin', createConsoleRouter(deps));
}

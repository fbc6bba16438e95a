import { createAdminRouter } from './admin/admin.router';
import { createAccountRouter } from './auth/account.router';
import { createActivityRouter, createAuditRouter } from './audit/audit.router';
import { createAppsRouter } from './auth/apps.router';
import { createAuthRouter } from './auth/auth.router';
import { createMfaRouter } from './auth/mfa.router';
import { createDocsRouter } from './docs/docs.router';
import { createFederationRouter } from './federation/federation.router';
import { createIdentityProvidersRouter } from './federation/identity-providers.router';
import { createSamlAppsRouter } from './saml/saml-apps.router';
import { createSamlRouter } from './saml/saml.router';
import { createHealthRouter } from './health/health.router';
import { createDiscoveryRouter, createOAuthProtocolRouter, createOAuthRouter } from './oauth/oauth.router';
import { createRegistrationRouter } from './oauth/registration.router';
import { createOidcDiscoveryRouter, createOidcProtocolRouter, createOidcRouter } from './oauth/oidc.router';
import { createAccountPagesRouter } from './pages/account-pages.router';
import { createDevicePagesRouter } from './pages/device-pages.router';
import { createLinkConfirmPagesRouter } from './pages/link-confirm-pages.router';
import { createMfaPagesRouter } from './pages/mfa-pages.router';
import { createOAuthPagesRouter } from './pages/oauth-pages.router';
import { createSetupPagesRouter } from './pages/setup-pages.router';
import { createRegisterPagesRouter } from './pages/register-pages.router';
import { createEmailSignInPagesRouter } from './pages/email-sign-in-pages.router';
import { createEmailSignInRouter } from './auth/email-sign-in.router';
import { createSelfServicePagesRouter } from './pages/self-service-pages.router';
import { createFaviconRouter, createStaticRouter } from './pages/static.router';
import { createRbacRouter } from './rbac/rbac.router';
import { createSettingsRouter } from './settings/settings.router';
import { createUserImportRouter } from './admin/user-import.router';
import type { Scope } from './scope';
import { createUsersRouter } from './users/users.router';
import { createScimAdminRouter } from './scim/scim-admin.router';
import { createScimRouter } from './scim/scim.router';
import { createWebhooksRouter } from './webhooks/webhooks.router';

/** The scopes of the app (built by createScopes in src/app.ts), each with its own steps. */
export interface Scopes {
  /** Public documents (/health, discovery): no step but CORS. */
  documents: Scope;
  /** The public documents under /api (the spec's discovery path): CORS and the per-IP limiter of every /api path (spec §8). */
  apiDocuments: Scope;
  /** /api: CORS, the per-IP limiter, body parsers, the origin check. */
  api: Scope;
  /** /api with RFC 6749's error dialect: the OAuth protocol endpoints. */
  oauthProtocol: Scope;
  /** /api under MFA_REQUIRED_FOR_ADMINS: users, RBAC and everything under /api/admin. */
  administration: Scope;
  /** HTML pages: form parser, origin check, the page error boundary (the 429 page). */
  pages: Scope;
  /** The administration console (/admin): the pages scope under MFA_REQUIRED_FOR_ADMINS, like the API it mirrors. */
  consolePages: Scope;
  /** /scim/v2 (CONTRACT §20): SCIM's JSON types, a SCIM connection's token, errors in the SCIM error schema. */
  scim: Scope;
}

/**
 * The one URL map of the service: which scope each router is mounted in, and where. What each route requires, accepts
 * and answers is its declaration (src/routes/route.ts); the app's route table (src/routes/route-table.ts), which the
 * OpenAPI document and the permission matrix read, is recorded as they are mounted.
 */
export function mountRoutes({ documents, apiDocuments, api, oauthProtocol, administration, pages, scim }: Scopes): void {
  // Polled most, by load balancers and relying parties: GET only, no body, no cookie, no session, no security event.
  documents.mount('/health', createHealthRouter);
  // The spec's discovery path, and the RFC 8414 location (CONTRACT §5).
  apiDocuments.mount('/api/oauth/.well-known', createDiscoveryRouter);
  documents.mount('/.well-known', createDiscoveryRouter);
  // OpenID Connect Discovery 1.0 §4 at the issuer, and under /api/oauth (CONTRACT §9).
  apiDocuments.mount('/api/oauth/.well-known', createOidcDiscoveryRouter);
  documents.mount('/.well-known', createOidcDiscoveryRouter);

  api.mount('/auth', createAuthRouter);
  api.mount('/auth', createAccountRouter);
  api.mount('/auth', createAppsRouter);
  api.mount('/auth', createActivityRouter);
  // The provider list, the identities API and the browser round trip (/api/auth/idp/:slug/start and callback), which
  // answers its refusals as HTML pages itself (CONTRACT §16).
  api.mount('/auth', createFederationRouter);
  api.mount('/auth', createMfaRouter);
  api.mount('/auth', createEmailSignInRouter);
  oauthProtocol.mount('/oauth', createOAuthProtocolRouter);
  oauthProtocol.mount('/oauth', createOidcProtocolRouter);
  // RFC 7591/7592 (CONTRACT §13): in RFC 6749's error dialect, as RFC 7591 §3.2.2 wants.
  oauthProtocol.mount('/oauth', createRegistrationRouter);
  api.mount('/oauth', createOAuthRouter);
  api.mount('/oauth', createOidcRouter);
  administration.mount('/users', createUsersRouter);
  administration.mount('/rbac', createRbacRouter);
  administration.mount('/admin', createAuditRouter);
  administration.mount('/admin', createAdminRouter);
  administration.mount('/admin', createWebhooksRouter);
  administration.mount('/admin', createIdentityProvidersRouter);
  administration.mount('/admin', createScimAdminRouter);
  administration.mount('/admin', createSamlAppsRouter);
  administration.mount('/admin', createSettingsRouter);
  administration.mount('/admin', createUserImportRouter);
  api.mount('/', createDocsRouter);
  scim.mount('/', createScimRouter);

  pages.mount('/static', createStaticRouter);
  pages.mount('/', createFaviconRouter);
  pages.mount('/', createOAuthPagesRouter);
  pages.mount('/', createMfaPagesRouter);
  pages.mount('/', createLinkConfirmPagesRouter);
  pages.mount('/', createSelfServicePagesRouter);
  pages.mount('/', createAccountPagesRouter);
  pages.mount('/', createSetupPagesRouter);
  pages.mount('/', createDevicePagesRouter);
  pages.mount('/', createRegisterPagesRouter);
  pages.mount('/', createEmailSignInPagesRouter);
  pages.mount('/saml', createSamlRouter);
}

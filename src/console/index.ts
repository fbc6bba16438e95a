import { createConsoleIdentityProvidersRouter } from './identity-providers/identity-providers.console';
import { createConsoleResourcesRouter } from './resources/resources.console';
import { createConsoleScimRouter } from './scim/scim.console';
import { createConsoleWebhooksRouter } from './webhooks/webhooks.console';
import { createConsoleSamlRouter } from './saml/saml.console';
import { createConsoleUserImportRouter } from './user-import/user-import.console';
import { createConsoleUsersRouter } from './users/users.console';
import { createConsoleApplicationsRouter } from './applications/applications.console';
import { createConsoleSettingsRouter } from './settings/settings.console';
import { createConsoleRolesRouter } from './roles/roles.console';
import { createConsoleAuditRouter } from './audit/audit.console';
import { createConsoleSigningKeysRouter } from './signing-keys/signing-keys.console';
import { createConsoleOverviewRouter } from './overview/overview.console';
import type { Scope } from '../routes/scope';

/**
 * The administration console (/admin): its areas' routers in the console's scope. src/app.ts mounts them after the API
 * and the end-user pages (routes/index.ts); the console builds on the API's declarations, never the reverse.
 */
export function mountConsole(consolePages: Scope): void {
  // HTML pages, refused as pages; every action is built from its /api/admin route's declaration.
  // Before the console's other routes: /users/new is not a /users/:userId.
  // Before the users' pages: /admin/users/import is not a user id.
  consolePages.mount('/admin', createConsoleUserImportRouter);
  consolePages.mount('/admin', createConsoleUsersRouter);
  consolePages.mount('/admin', createConsoleOverviewRouter);
  consolePages.mount('/admin', createConsoleAuditRouter);
  consolePages.mount('/admin', createConsoleSigningKeysRouter);
  consolePages.mount('/admin', createConsoleApplicationsRouter);
  consolePages.mount('/admin', createConsoleRolesRouter);
  consolePages.mount('/admin', createConsoleResourcesRouter);
  consolePages.mount('/admin', createConsoleIdentityProvidersRouter);
  consolePages.mount('/admin', createConsoleWebhooksRouter);
  consolePages.mount('/admin', createConsoleScimRouter);
  consolePages.mount('/admin', createConsoleSettingsRouter);
  consolePages.mount('/admin', createConsoleSamlRouter);
}

import { z } from 'zod';
import type { GrantWithClientRow } from '../../db/repositories/oauth-grants.repo';
import { forbidden } from '../../errors';
import { Redirect } from '../../http/outcome';
import { renderPageOutcome } from '../pages/page-kit';
import { disconnectApp, listConnectedApps } from '../../services/oauth/apps.service';
import { listSamlAppsOfPerson } from '../../services/saml/saml-apps.service';
import type { Principal } from '../../services/principal';
import { timestampField } from '../../wire/common.schemas';
import { connectedAppBody, type ConnectedApp } from '../../wire/auth/account.schemas';
import { rawQueryOf } from '../shared';
import { route, routerOf } from '../route';

const clientIdParam = z.object({ clientId: z.string().min(1).max(200, 'clientId is too long') });

const appsBody = z.strictObject({
  apps: z.array(connectedAppBody),
  saml_apps: z
    .array(z.strictObject({ id: z.string(), name: z.string(), last_sign_in_at: timestampField, sign_in_url: z.string() }))
    .meta({ description: 'SAML applications the person signed in to, with the IdP-initiated sign-in link (docs/saml.md)' }),
});

export function presentApp(grant: GrantWithClientRow): ConnectedApp {
  return {
    client_id: grant.clientId,
    name: grant.clientName,
    scopes: grant.scopes,
    granted_at: grant.grantedAt.toISOString(),
    last_used_at: grant.lastUsedAt ? grant.lastUsedAt.toISOString() : null,
  };
}

/** A token issued to one OAuth client must not manage the user's other app connections. */
function firstPartyUserId(principal: Principal): string {
  if (principal.clientId) throw forbidden('Managing connected apps requires a first-party session');
  return principal.userId;
}

/** Connected apps (CONTRACT §4) and the legacy /authorize redirect. */
export const createAppsRouter = routerOf(() => [
  route(
    {
      method: 'get',
      path: '/apps',
      summary: 'Apps approved to sign in with this account',
      tags: ['Account'],
      auth: 'user',
      response: { description: '{ apps: [{ client_id, name, scopes, granted_at, last_used_at }], saml_apps }', schema: appsBody },
    },
    async ({ principal, ctx }) => {
      const userId = firstPartyUserId(principal);
      const [apps, samlApps] = await Promise.all([listConnectedApps(ctx, userId), listSamlAppsOfPerson(ctx, userId)]);
      return {
        apps: apps.map(presentApp),
        saml_apps: samlApps.map((a) => ({
          id: a.appId,
          name: a.name,
          last_sign_in_at: a.lastSignInAt.toISOString(),
          sign_in_url: `${ctx.config.baseUrl}/saml/sso?app=${a.appId}`,
        })),
      };
    },
  ),
  route(
    {
      method: 'delete',
      path: '/apps/:clientId',
      summary: "Drop an app's grant and revoke its sessions",
      tags: ['Account'],
      auth: 'user',
      params: clientIdParam,
      response: { status: 204, description: 'Dropped', kind: 'empty' },
    },
    async ({ principal, params, ctx }) => {
      await disconnectApp(ctx, firstPartyUserId(principal), params.clientId);
    },
  ),
  // Legacy entry point (spec §4.2): the same query goes to /api/oauth/authorize, so every PKCE rule still applies.
  route(
    {
      method: 'get',
      path: '/authorize',
      summary: 'Legacy: 302 to /api/oauth/authorize with the same query',
      tags: ['OAuth 2.0'],
      auth: 'none',
      // RFC 9700 §2.6 / CONTRACT §8: an authorization redirect is never readable cross-origin.
      cors: false,
      response: { status: 302, description: 'Redirect', kind: 'redirect' },
      outcome: renderPageOutcome,
    },
    (_input, req) => new Redirect(`/api/oauth/authorize${rawQueryOf(req)}`, undefined, 302),
  ),
]);

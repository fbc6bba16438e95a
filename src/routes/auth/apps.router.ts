import { Router } from 'express';
import { z } from 'zod';
import { principalOf } from '../../middleware/authenticate';
import { validate } from '../../middleware/validate';
import { forbidden } from '../../errors';
import type { GrantWithClientRow } from '../../db/repositories/oauth-grants.repo';
import { disconnectApp, listConnectedApps } from '../../services/oauth/apps.service';
import type { Principal } from '../../services/principal';
import { rawQueryOf } from '../oauth/oauth.router';
import type { RouteDeps } from '../types';

const clientIdParam = z.object({ clientId: z.string().min(1).max(200, 'clientId is too long') });

function presentApp(grant: GrantWithClientRow) {
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
export function createAppsRouter({ ctx, authenticate }: RouteDeps): Router {
  const router = Router();

  router.get('/apps', authenticate(), async (req, res) => {
    const apps = await listConnectedApps(ctx, firstPartyUserId(principalOf(req)));
    res.json({ apps: apps.map(presentApp) });
  });

  router.delete('/apps/:clientId', authenticate(), validate({ params: clientIdParam }), async (req, res) => {
    await disconnectApp(ctx, firstPartyUserId(principalOf(req)), String(req.params.clientId));
    res.status(204).end();
  });

  // Legacy entry point (spec §4.2): the same query goes to /api/oauth/authorize, so every PKCE rule still applies.
  router.get('/authorize', (req, res) => {
    res.redirect(302, `/api/oauth/authorize${rawQueryOf(req)}`);
  });

  return router;
}

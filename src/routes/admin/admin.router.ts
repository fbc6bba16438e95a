import { Router } from 'express';
import { requireAdmin, requirePermission } from '../../middleware/authorize';
import { validate } from '../../middleware/validate';
import { getSummary } from '../../services/admin.service';
import * as clients from '../../services/oauth/clients.service';
import type { RouteDeps } from '../types';
import { presentClient, presentSummary } from './admin.presenters';
import { clientIdParams, createClientBody, updateClientBody } from './admin.schemas';

/** OAuth-client administration and summary (spec §4.6). The client secret appears in create and rotate only. */
export function createAdminRouter({ ctx, authenticate }: RouteDeps): Router {
  const router = Router();
  router.use(authenticate());

  router.get('/summary', requireAdmin(), async (_req, res) => {
    res.json(presentSummary(await getSummary(ctx)));
  });

  router.get('/oauth-clients', requirePermission('oauth_clients:read'), async (_req, res) => {
    res.json({ clients: (await clients.listClients(ctx)).map(presentClient) });
  });

  router.post('/oauth-clients', requirePermission('oauth_clients:write'), validate({ body: createClientBody }), async (req, res) => {
    const { client, clientSecret } = await clients.createClient(ctx, req.body);
    // The secret is shown once: keep it out of every cache (RFC 6749 §5.1 applies the same rule to tokens).
    res.set('Cache-Control', 'no-store');
    res.status(201).json({ client: presentClient(client), client_secret: clientSecret });
  });

  router.get('/oauth-clients/:clientId', requirePermission('oauth_clients:read'), validate({ params: clientIdParams }), async (req, res) => {
    res.json({ client: presentClient(await clients.getClient(ctx, req.params.clientId as string)) });
  });

  router.put(
    '/oauth-clients/:clientId',
    requirePermission('oauth_clients:write'),
    validate({ params: clientIdParams, body: updateClientBody }),
    async (req, res) => {
      res.json({ client: presentClient(await clients.updateClient(ctx, req.params.clientId as string, req.body)) });
    },
  );

  router.post(
    '/oauth-clients/:clientId/rotate-secret',
    requirePermission('oauth_clients:rotate_secret'),
    validate({ params: clientIdParams }),
    async (req, res) => {
      const rotated = await clients.rotateClientSecret(ctx, req.params.clientId as string);
      res.set('Cache-Control', 'no-store');
      res.json({ client_id: rotated.clientId, client_secret: rotated.clientSecret });
    },
  );

  router.delete('/oauth-clients/:clientId', requirePermission('oauth_clients:delete'), validate({ params: clientIdParams }), async (req, res) => {
    res.json({ client: presentClient(await clients.deactivateClient(ctx, req.params.clientId as string)) });
  });

  return router;
}

import { findClientById, isRegisteredCorsOrigin } from '../../db/repositories/oauth-clients.repo';
import type { ServiceContext } from '../context';

/**
 * The browser origins that may call the endpoints a browser application calls itself (docs/apps.md, "Browser
 * applications and CORS"): the global `allowed_origins` setting, and each active client's own origins, read from its
 * row at each request (so an edit takes effect at once on every instance). The CORS steps of src/http/client-cors.ts
 * ask through this (their `ClientOrigins` port); src/app.ts passes it to the routes.
 */
export function clientOrigins(ctx: Pick<ServiceContext, 'db' | 'settings'>) {
  return {
    isGlobal: (origin: string): boolean => ctx.settings.current.allowedOrigins.has(origin),
    listedBy: async (clientId: string, origin: string): Promise<boolean> => {
      const client = await findClientById(ctx.db, clientId);
      return client !== undefined && client.isActive && client.corsOrigins.includes(origin);
    },
    listedByAny: (origin: string): Promise<boolean> => isRegisteredCorsOrigin(ctx.db, origin),
  };
}

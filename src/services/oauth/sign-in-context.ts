import { findClientById } from '../../db/repositories/oauth-clients.repo';
import type { ServiceContext } from '../context';
import { resolveReturnTo } from './return-to';

/**
 * The application a hosted sign-in is for (CONTRACT §15: "to continue to {client name}"): the active client of the
 * OAuth/OIDC authorize request the sign-in returns to. Undefined for any other destination, an unknown or inactive
 * client, or a return_to that is not allowed (then the page shows no name rather than one from the query).
 */
export async function applicationNameFor(ctx: ServiceContext, returnTo: string | undefined): Promise<string | undefined> {
  const target = resolveReturnTo(ctx.config, returnTo);
  if (!target) return undefined;
  const url = new URL(target);
  if (url.origin !== ctx.config.baseOrigin || url.pathname !== '/api/oauth/authorize') return undefined;
  const clientId = url.searchParams.getAll('client_id');
  if (clientId.length !== 1 || !clientId[0] || clientId[0].length > 200) return undefined;
  const client = await findClientById(ctx.db, clientId[0]);
  return client?.isActive ? client.name : undefined;
}

import { findClientById } from '../../db/repositories/oauth-clients.repo';
import type { ServiceContext } from '../context';
import { resolveReturnTo } from './return-to';

/** The application a hosted sign-in is for, as the sign-in pages name it. */
export interface SignInApplication {
  name: string;
  /**
   * The client registered itself (RFC 7591 or a Client ID Metadata Document, CONTRACT §13): its name is self-chosen and
   * no administrator reviewed it, so the page says so before the password is typed (issue 30). `host` is a metadata
   * document client's URL host, the one thing about it that is not self-chosen.
   */
  unreviewed?: { host?: string };
}

/**
 * The application a hosted sign-in is for (CONTRACT §15: "to continue to {client name}"): the active client of the
 * OAuth/OIDC authorize request the sign-in returns to. Undefined for any other destination, an unknown or inactive
 * client, or a return_to that is not allowed (then the page shows no name rather than one from the query).
 */
export async function signInApplicationFor(ctx: ServiceContext, returnTo: string | undefined): Promise<SignInApplication | undefined> {
  const target = resolveReturnTo(ctx.config, returnTo);
  if (!target) return undefined;
  const url = new URL(target);
  if (url.origin !== ctx.config.baseOrigin || url.pathname !== '/api/oauth/authorize') return undefined;
  const clientId = url.searchParams.getAll('client_id');
  if (clientId.length !== 1 || !clientId[0] || clientId[0].length > 200) return undefined;
  const client = await findClientById(ctx.db, clientId[0]);
  if (!client?.isActive) return undefined;
  if (client.registration === 'admin') return { name: client.name };
  return {
    name: client.name,
    unreviewed: client.registration === 'metadata_document' ? { host: new URL(client.clientId).host } : {},
  };
}

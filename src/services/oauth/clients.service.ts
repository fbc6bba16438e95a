import { withTransaction } from '../../db';
import {
  findClientById,
  insertClient,
  listClients as listClientRows,
  updateClient as updateClientRow,
  type OAuthClientRow,
} from '../../db/repositories/oauth-clients.repo';
import { revokeSessionsOfClient } from '../../db/repositories/sessions.repo';
import { notFound } from '../../errors';
import type { ServiceContext } from '../context';
import { generateClientId, generateClientSecret } from './client-secrets';

/** Input already validated at the edge: redirect URIs pass checkRedirectUri, scopes are within SUPPORTED_SCOPES. */
export interface ClientInput {
  name: string;
  redirectUris: string[];
  scopes: string[];
  isActive?: boolean;
}

/** The plain secret is returned here and by rotateClientSecret only; the database keeps its SHA-256 (spec §2.6). */
export async function createClient(ctx: ServiceContext, input: ClientInput): Promise<{ client: OAuthClientRow; clientSecret: string }> {
  const { secret, secretHash } = generateClientSecret();
  const client = await insertClient(ctx.db, {
    clientId: generateClientId(),
    name: input.name,
    secretHash,
    redirectUris: input.redirectUris,
    scopes: input.scopes,
    isActive: input.isActive ?? true,
    now: ctx.clock.now(),
  });
  return { client, clientSecret: secret };
}

export async function listClients(ctx: ServiceContext): Promise<OAuthClientRow[]> {
  return listClientRows(ctx.db);
}

export async function getClient(ctx: ServiceContext, clientId: string): Promise<OAuthClientRow> {
  const client = await findClientById(ctx.db, clientId);
  if (!client) throw notFound('OAuth client');
  return client;
}

/** `isActive: false` deactivates: the client's sessions are revoked with it (CONTRACT §6). */
export async function updateClient(ctx: ServiceContext, clientId: string, patch: Partial<ClientInput>): Promise<OAuthClientRow> {
  const now = ctx.clock.now();
  return withTransaction(ctx.db, async (trx) => {
    const client = await updateClientRow(trx, clientId, patch, now);
    if (!client) throw notFound('OAuth client');
    if (patch.isActive === false) await revokeSessionsOfClient(trx, clientId, now);
    return client;
  });
}

/** The old secret stops working at once: its hash is overwritten in the same statement (spec §5.11). */
export async function rotateClientSecret(ctx: ServiceContext, clientId: string): Promise<{ clientId: string; clientSecret: string }> {
  const { secret, secretHash } = generateClientSecret();
  const client = await updateClientRow(ctx.db, clientId, { secretHash }, ctx.clock.now());
  if (!client) throw notFound('OAuth client');
  return { clientId: client.clientId, clientSecret: secret };
}

export async function deactivateClient(ctx: ServiceContext, clientId: string): Promise<OAuthClientRow> {
  return updateClient(ctx, clientId, { isActive: false });
}

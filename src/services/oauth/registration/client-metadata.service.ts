import { withTransaction } from '../../../db';
import { listOpenRegistrationResources } from '../../../db/repositories/api-resources.repo';
import { findClientById, upsertMetadataDocumentClient, type OAuthClientRow } from '../../../db/repositories/oauth-clients.repo';
import type { ServiceContext } from '../../context';
import { MetadataDocumentRefused } from './metadata-document-fetcher';
import { checkMetadataDocumentUrl, isMetadataDocumentClientId, type MetadataDocumentClient } from './metadata-document-policy';

/** The fetcher and its cache (metadata-document-fetcher.ts); this file keeps the rows they become. */
export {
  createMetadataDocumentFetcher,
  MetadataDocumentRefused,
  type MetadataDocumentFetcher,
  type MetadataDocumentFetcherOptions,
} from './metadata-document-fetcher';

export type ClientLookup = { client: OAuthClientRow | undefined; refusal?: string };

/**
 * The client a request names by `client_id`, for the endpoints where a client first shows up (authorize, and client
 * authentication at token, revoke and device). A registered client is read as before; an https client_id is a
 * metadata document when CLIENT_ID_METADATA_DOCUMENTS is on, and unknown otherwise (also when a row from an earlier
 * "on" period exists). `refusal` says why a document could not be used; callers check `isActive` as for any client.
 */
export async function findClientForRequest(ctx: ServiceContext, clientId: string): Promise<ClientLookup> {
  if (!isMetadataDocumentClientId(clientId)) {
    return { client: clientId.length <= 200 ? await ctx.clients.find(clientId) : undefined };
  }
  if (!ctx.settings.current.values.client_id_metadata_documents) return { client: undefined };
  const url = checkMetadataDocumentUrl(clientId);
  if (!url.ok) return { client: undefined, refusal: url.reason };
  const existing = await findClientById(ctx.db, clientId);
  if (existing && existing.registration !== 'metadata_document') return { client: undefined };
  // An admin deactivated it: refused without a fetch (the caller answers as for any inactive client).
  if (existing && !existing.isActive) return { client: existing };
  let document: MetadataDocumentClient;
  try {
    document = await ctx.clientMetadata.fetch(clientId);
  } catch (err) {
    if (err instanceof MetadataDocumentRefused) {
      ctx.logger.info({ clientId, reason: err.message, detail: err.detail }, 'client metadata document refused');
      return { client: undefined, refusal: err.message };
    }
    throw err;
  }
  return { client: await storeMetadataDocumentClient(ctx, document) };
}

/** Writes the row (and its audit event, in one transaction) when it is new or the document changed. */
async function storeMetadataDocumentClient(ctx: ServiceContext, document: MetadataDocumentClient): Promise<OAuthClientRow | undefined> {
  return withTransaction(ctx.db, async (trx) => {
    // CONTRACT §13: the resources of an `open` registration, as they are now.
    const allowedResources = (await listOpenRegistrationResources(trx)).map((r) => r.identifier);
    const { row, created, changed } = await upsertMetadataDocumentClient(trx, {
      clientId: document.clientId,
      name: document.name,
      redirectUris: document.redirectUris,
      scopes: document.scopes,
      allowedResources,
      grantTypes: document.grantTypes,
      jwksUri: document.jwksUri ?? null,
      dpopBoundAccessTokens: document.dpopBoundAccessTokens ?? false,
      now: ctx.clock.now(),
    });
    if (row.registration !== 'metadata_document') return undefined;
    if (created || changed) {
      await ctx.events.record(trx, {
        type: created ? 'oauth.client.created' : 'oauth.client.changed',
        actorId: null,
        subjectId: row.clientId,
        clientId: row.clientId,
        detail: { registration: 'metadata_document', host: document.host },
      });
    }
    return row;
  });
}

/**
 * Whether a stored client may still be used where it is read by id (consent, pending requests): a metadata-document
 * client only while CLIENT_ID_METADATA_DOCUMENTS is on.
 */
export function clientRegistrationEnabled(ctx: ServiceContext, client: Pick<OAuthClientRow, 'registration'>): boolean {
  return client.registration !== 'metadata_document' || ctx.settings.current.values.client_id_metadata_documents;
}

import type { Clock } from '../../../lib/clock';
import { outboundRequest, OutboundRefused, type OutboundPolicy } from '../../../lib/outbound-http';
import {
  cacheLifetimeSeconds,
  checkMetadataDocument,
  checkMetadataDocumentUrl,
  METADATA_DOCUMENT_MAX_BYTES,
  METADATA_DOCUMENT_TIMEOUT_MS,
  type MetadataDocumentClient,
} from './metadata-document-policy';
import { setNewest } from '../../../lib/bounded-map';

/**
 * Client ID Metadata Documents (CONTRACT §13): an https client_id is fetched, judged by metadata-document-policy.ts,
 * cached per Cache-Control, and kept as an `oauth_clients` row (`registration: "metadata_document"`, public, no
 * secret) so that consent, grants, tokens, refresh, audit and the admin API treat it like any client. The row is
 * written on first use and brought in step whenever a fetched document differs; an admin's deactivation of the row
 * stands (the document is then not even fetched).
 *
 * Every fetch goes through lib/outbound-http.ts: resolved first, every address classified, connected to the vetted
 * address, no redirects, 5 s, 64 KB, and never a private, loopback or link-local address unless the host is in
 * CIMD_ALLOWED_HOSTS.
 */

/** The document could not be used; `message` is safe to show the client (it names no internal detail). */
export class MetadataDocumentRefused extends Error {
  override name = 'MetadataDocumentRefused';
  constructor(
    message: string,
    /** For the log only: what the outbound request said (it may name internal addresses). */
    readonly detail?: string,
  ) {
    super(message);
  }
}

export interface MetadataDocumentFetcher {
  /** The validated document at `clientId` (cached when its Cache-Control allows). Rejects with MetadataDocumentRefused. */
  fetch(clientId: string): Promise<MetadataDocumentClient>;
  /** How many documents the cache holds (bounded by `maxEntries`). */
  readonly size: number;
}

export interface MetadataDocumentFetcherOptions {
  clock: Clock;
  allowedHosts: readonly string[];
  /** Most documents kept; the least recently used goes first. */
  maxEntries?: number;
  /** Tests: a resolver (DNS answers of their choosing), a CA for their self-signed https server, shorter limits. */
  resolve?: OutboundPolicy['resolve'];
  ca?: string;
  timeoutMs?: number;
  maxBytes?: number;
}

const REFUSAL_MESSAGES: Record<OutboundRefused['reason'], string> = {
  bad_url: 'the client_id is not a usable URL',
  scheme: 'a metadata document client_id must be an https URL',
  // One answer for both: telling them apart would let anyone probe which internal names exist (the log says which).
  refused_address: 'the client_id’s host does not resolve to a public address',
  timeout: 'the metadata document did not arrive in time',
  too_large: 'the metadata document is too large',
  network: 'the metadata document could not be fetched',
};

export function createMetadataDocumentFetcher(options: MetadataDocumentFetcherOptions): MetadataDocumentFetcher {
  const maxEntries = options.maxEntries ?? 1000;
  const policy: OutboundPolicy = {
    allowPrivate: false,
    allowedHosts: new Set(options.allowedHosts),
    allowHttp: false,
    timeoutMs: options.timeoutMs ?? METADATA_DOCUMENT_TIMEOUT_MS,
    maxBytes: options.maxBytes ?? METADATA_DOCUMENT_MAX_BYTES,
    resolve: options.resolve,
    ca: options.ca,
  };
  const cache = new Map<string, { client: MetadataDocumentClient; expiresAtMs: number }>();
  // Concurrent first uses of one URL share one request.
  const inFlight = new Map<string, Promise<MetadataDocumentClient>>();

  async function download(clientId: string): Promise<MetadataDocumentClient> {
    const url = checkMetadataDocumentUrl(clientId);
    if (!url.ok) throw new MetadataDocumentRefused(url.reason);
    let response;
    try {
      response = await outboundRequest(url.value, { headers: { accept: 'application/json' } }, policy);
    } catch (err) {
      if (err instanceof OutboundRefused) throw new MetadataDocumentRefused(REFUSAL_MESSAGES[err.reason], err.internal);
      throw err;
    }
    // The draft: the document is served with 200; a redirect is never followed (it would leave the vetted host).
    if (response.status >= 300 && response.status < 400) throw new MetadataDocumentRefused('the metadata document URL redirects');
    if (response.status !== 200) throw new MetadataDocumentRefused(`the metadata document URL answered ${response.status}`);
    let document: unknown;
    try {
      document = JSON.parse(response.body.toString('utf8'));
    } catch {
      throw new MetadataDocumentRefused('the metadata document is not JSON');
    }
    const verdict = checkMetadataDocument(clientId, document);
    if (!verdict.ok) throw new MetadataDocumentRefused(`invalid metadata document: ${verdict.reason}`);
    const lifetime = cacheLifetimeSeconds(response.headers.get('cache-control'));
    if (lifetime > 0) {
      setNewest(cache, clientId, { client: verdict.value, expiresAtMs: options.clock.now().getTime() + lifetime * 1000 }, maxEntries);
    }
    return verdict.value;
  }

  return {
    get size() {
      return cache.size;
    },
    async fetch(clientId) {
      const cached = cache.get(clientId);
      if (cached && cached.expiresAtMs > options.clock.now().getTime()) {
        cache.delete(clientId);
        cache.set(clientId, cached);
        return cached.client;
      }
      if (cached) cache.delete(clientId);
      const pending = inFlight.get(clientId);
      if (pending) return pending;
      const started = download(clientId).finally(() => inFlight.delete(clientId));
      inFlight.set(clientId, started);
      return started;
    },
  };
}

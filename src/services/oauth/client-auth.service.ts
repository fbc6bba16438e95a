import { findClientById, type OAuthClientRow } from '../../db/repositories/oauth-clients.repo';
import { OAuthError } from '../../errors';
import { sha256Hex } from '../../lib/crypto';
import type { ServiceContext } from '../context';
import { clientAuthentication, type ClientEndpoint } from './client-policy';
import { verifyClientSecret } from './client-secrets';

/** Compared against when the client is unknown, so that the answer takes the same time. */
const DUMMY_SECRET_HASH = sha256Hex('no-such-client');

export interface ClientCredentialsInput {
  authorization?: string;
  clientId?: unknown;
  clientSecret?: unknown;
}

function decodeFormComponent(value: string): string | undefined {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/** RFC 6749 §2.3.1: Basic credentials are application/x-www-form-urlencoded before base64. */
function parseBasic(header: string): { clientId: string; clientSecret: string } | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=._~-]+)\s*$/i.exec(header);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  const clientId = decodeFormComponent(decoded.slice(0, colon));
  const clientSecret = decodeFormComponent(decoded.slice(colon + 1));
  if (clientId === undefined || clientSecret === undefined) return undefined;
  return { clientId, clientSecret };
}

function invalidClient(usedBasic: boolean, description = 'Client authentication failed'): OAuthError {
  // RFC 6749 §5.2: 401 with WWW-Authenticate matching the scheme the client used.
  return new OAuthError('invalid_client', description, usedBasic ? { headers: { 'WWW-Authenticate': 'Basic realm="oauth"' } } : {});
}

/** A client as authenticated; `cached` when it came from this instance's cache (its version not yet confirmed). */
export type AuthenticatedClient = OAuthClientRow & { cached?: true };

/** Clients kept per instance: enough for every client of a deployment; the oldest goes first past it. */
const CLIENT_CACHE_SIZE = 1000;
const clientCaches = new WeakMap<ServiceContext, Map<string, OAuthClientRow>>();

function clientCacheOf(ctx: ServiceContext): Map<string, OAuthClientRow> {
  let cache = clientCaches.get(ctx);
  if (!cache) {
    cache = new Map();
    clientCaches.set(ctx, cache);
  }
  return cache;
}

function rememberClient(ctx: ServiceContext, client: OAuthClientRow): void {
  const cache = clientCacheOf(ctx);
  cache.delete(client.clientId);
  cache.set(client.clientId, client);
  if (cache.size > CLIENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
}

/** Drops a cached client whose version the database did not confirm (or that failed authentication). */
export function forgetClient(ctx: ServiceContext, clientId: string): void {
  clientCacheOf(ctx).delete(clientId);
}

/**
 * client_secret_basic or client_secret_post (spec §5.6), never both (RFC 6749 §2.3: one method per request).
 * Unknown, inactive and wrong-secret clients answer the same 401 invalid_client.
 *
 * `cached` (the refresh grant only, issue 10): a client this instance authenticated before is taken from its cache
 * when the presented secret matches the cached hash (compared in constant time, as always), without reading the
 * client. The caller must then have the database confirm the cached `version` where it uses the client (the refresh
 * rotation statement does) and decide again from a fresh read when it does not. A secret that does not match the
 * cached hash is checked against a fresh read, so a secret rotated on another instance works at once.
 */
export async function authenticateClient(
  ctx: ServiceContext,
  input: ClientCredentialsInput,
  options: { cached?: boolean; endpoint: ClientAuthEndpoint },
): Promise<AuthenticatedClient> {
  try {
    return await authenticate(ctx, input, options);
  } catch (err) {
    if (err instanceof ClientAuthFailure) {
      // CONTRACT §11: every failed client authentication leaves an audit row, naming the client when it exists.
      await ctx.events.record(ctx.db, {
        type: 'oauth.client.auth_failed',
        actorId: null,
        subjectId: err.knownClientId ?? null,
        clientId: err.knownClientId ?? null,
        detail: { endpoint: options.endpoint, reason: err.reason },
      });
      throw err.error;
    }
    throw err;
  }
}

/** Where a client authenticated (the audit row's `detail.endpoint`). */
export type ClientAuthEndpoint = ClientEndpoint;

class ClientAuthFailure extends Error {
  constructor(
    readonly error: OAuthError,
    readonly reason: 'no_credentials' | 'malformed' | 'unknown_client' | 'wrong_secret' | 'inactive' | 'public_client_refused',
    readonly knownClientId?: string,
  ) {
    super(error.message);
  }
}

async function authenticate(
  ctx: ServiceContext,
  input: ClientCredentialsInput,
  options: { cached?: boolean; endpoint: ClientAuthEndpoint },
): Promise<AuthenticatedClient> {
  const header = input.authorization;
  const usesBasic = typeof header === 'string' && /^Basic\b/i.test(header.trim());
  const bodyId = input.clientId;
  const bodySecret = input.clientSecret;
  if ((bodyId !== undefined && typeof bodyId !== 'string') || (bodySecret !== undefined && typeof bodySecret !== 'string')) {
    throw new OAuthError('invalid_request', 'client_id and client_secret must be single strings');
  }

  let clientId: string;
  let clientSecret: string | undefined;
  if (usesBasic) {
    if (bodySecret !== undefined) {
      throw new OAuthError('invalid_request', 'Use one client authentication method: HTTP Basic or client_secret in the body, not both');
    }
    const basic = parseBasic(header!);
    if (!basic) throw new ClientAuthFailure(invalidClient(true, 'Malformed HTTP Basic credentials'), 'malformed');
    if (bodyId !== undefined && bodyId !== basic.clientId) {
      throw new OAuthError('invalid_request', 'client_id in the body does not match the HTTP Basic credentials');
    }
    ({ clientId, clientSecret } = basic);
  } else {
    if (!bodyId) {
      throw new ClientAuthFailure(invalidClient(false, 'Client authentication required'), 'no_credentials');
    }
    clientId = bodyId;
    clientSecret = bodySecret;
  }

  if (options.cached && clientSecret !== undefined) {
    const known = clientCacheOf(ctx).get(clientId);
    if (known?.secretHash && verifyClientSecret(clientSecret, known.secretHash)) return { ...known, cached: true };
  }
  const client = clientId.length <= 200 ? await findClientById(ctx.db, clientId) : undefined;
  // CONTRACT §12: a public client presents its client_id alone (token_endpoint_auth_method none).
  const judged = clientAuthentication(client?.type ?? 'confidential', { secret: clientSecret !== undefined }, options.endpoint);
  if (client?.isActive && judged.verdict === 'id_only') return client;
  if (judged.verdict === 'refuse' && client?.isActive && client.type === 'public') {
    forgetClient(ctx, clientId);
    throw new ClientAuthFailure(invalidClient(usesBasic, judged.reason), 'public_client_refused', client.clientId);
  }
  if (clientSecret === undefined) {
    throw new ClientAuthFailure(invalidClient(usesBasic, 'Client authentication required'), 'no_credentials', client?.clientId);
  }
  const secretOk = verifyClientSecret(clientSecret, client?.secretHash ?? DUMMY_SECRET_HASH);
  if (!client || !secretOk || !client.isActive) {
    forgetClient(ctx, clientId);
    const reason = !client ? 'unknown_client' : !secretOk ? 'wrong_secret' : 'inactive';
    throw new ClientAuthFailure(invalidClient(usesBasic), reason, client?.clientId);
  }
  rememberClient(ctx, client);
  return client;
}

/**
 * Thrown by the refresh and client_credentials grants made with a cached client for any refusal before the rotation
 * statement confirmed the client's version (no refresh_token, a token that is no JWT or another client's, a scope the
 * cached client lacks) and when that statement consumed nothing: the token endpoint runs the request again with the
 * client read afresh (`tokenEndpoint`), so the answer is the one a fresh read gives.
 */
export class UnconfirmedClient extends Error {
  constructor() {
    super('cached OAuth client not confirmed by the database');
  }
}

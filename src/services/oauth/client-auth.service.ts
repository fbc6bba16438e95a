import type { OAuthClientRow } from '../../db/repositories/oauth-clients.repo';
import { OAuthError } from '../../errors';
import { sha256Hex } from '../../lib/crypto';
import type { ServiceContext } from '../context';
import { AssertionRefused, readAssertion, verifyClientAssertion } from './client-assertion';
import { CLIENT_ASSERTION_TYPE } from './client-keys';
import { clientAuthentication, type ClientEndpoint } from '../../declarations/client-policy';
import { verifyClientSecret } from './client-secrets';
import { findClientForRequest } from './registration/client-metadata.service';

/** Compared against when the client is unknown, so that the answer takes the same time. */
const DUMMY_SECRET_HASH = sha256Hex('no-such-client');

export interface ClientCredentialsInput {
  authorization?: string;
  clientId?: unknown;
  clientSecret?: unknown;
  /** RFC 7523 §2.2 (issue 34): private_key_jwt. */
  clientAssertion?: unknown;
  clientAssertionType?: unknown;
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
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
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

/**
 * client_secret_basic or client_secret_post (spec §5.6), never both (RFC 6749 §2.3: one method per request).
 * Unknown, inactive and wrong-secret clients answer the same 401 invalid_client. The client is read on every request
 * (one prepared statement), so a secret rotated, a scope changed or a client deactivated on any instance applies to the
 * very next request everywhere.
 */
export async function authenticateClient(
  ctx: ServiceContext,
  input: ClientCredentialsInput,
  options: ClientAuthOptions,
): Promise<OAuthClientRow> {
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

export interface ClientAuthOptions {
  endpoint: ClientAuthEndpoint;
  /**
   * What the request must meet for this client besides authentication (the token endpoint: token.service.ts
   * refuseBeforeSpend; the PAR endpoint: par.service.ts judgePushedRequest), checked once a private_key_jwt assertion
   * has verified and before it is spent; it throws the request's error.
   */
  beforeSpend?: (client: OAuthClientRow) => void | Promise<void>;
}

class ClientAuthFailure extends Error {
  constructor(
    readonly error: OAuthError,
    readonly reason:
      | 'no_credentials'
      | 'malformed'
      | 'unknown_client'
      | 'wrong_secret'
      | 'inactive'
      | 'public_client_refused'
      | 'wrong_method'
      | AssertionRefused['reason'],
    readonly knownClientId?: string,
  ) {
    super(error.message);
  }
}

async function authenticate(ctx: ServiceContext, input: ClientCredentialsInput, options: ClientAuthOptions): Promise<OAuthClientRow> {
  const header = input.authorization;
  const usesBasic = typeof header === 'string' && /^Basic\b/i.test(header.trim());
  const bodyId = input.clientId;
  const bodySecret = input.clientSecret;
  if (input.clientAssertion !== undefined || input.clientAssertionType !== undefined) {
    if (usesBasic || bodySecret !== undefined) {
      throw new OAuthError(
        'invalid_request',
        'Use one client authentication method: a client assertion, HTTP Basic or client_secret, not several',
      );
    }
    return authenticateWithAssertion(ctx, input, options);
  }
  if ((bodyId !== undefined && typeof bodyId !== 'string') || (bodySecret !== undefined && typeof bodySecret !== 'string')) {
    throw new OAuthError('invalid_request', 'client_id and client_secret must be single strings');
  }

  let clientId: string;
  let clientSecret: string | undefined;
  if (usesBasic) {
    if (bodySecret !== undefined) {
      throw new OAuthError('invalid_request', 'Use one client authentication method: HTTP Basic or client_secret in the body, not both');
    }
    const basic = parseBasic(header);
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

  // CONTRACT §13: a metadata-document client is judged against its document (cached) at every endpoint, like at
  // authorize; a document that can no longer be used makes it an unknown client.
  const { client } = await findClientForRequest(ctx, clientId);
  // CONTRACT §12: a public client presents its client_id alone (token_endpoint_auth_method none).
  const judged = clientAuthentication(client?.type ?? 'confidential', { secret: clientSecret !== undefined }, options.endpoint);
  if (client?.isActive && judged.verdict === 'id_only') return client;
  if (judged.verdict === 'refuse' && client?.isActive && client.type === 'public') {
    throw new ClientAuthFailure(invalidClient(usesBasic, judged.reason), 'public_client_refused', client.clientId);
  }
  if (clientSecret === undefined) {
    throw new ClientAuthFailure(invalidClient(usesBasic, 'Client authentication required'), 'no_credentials', client?.clientId);
  }
  if (client?.isActive && client.tokenEndpointAuthMethod === 'private_key_jwt') {
    // It has no secret: whatever was sent is wrong, and the answer says how this client authenticates.
    throw new ClientAuthFailure(
      invalidClient(usesBasic, 'This client authenticates with private_key_jwt'),
      'wrong_method',
      client.clientId,
    );
  }
  const secretOk = verifyClientSecret(clientSecret, client?.secretHash ?? DUMMY_SECRET_HASH);
  if (!client || !secretOk || !client.isActive) {
    const reason = !client ? 'unknown_client' : !secretOk ? 'wrong_secret' : 'inactive';
    throw new ClientAuthFailure(invalidClient(usesBasic), reason, client?.clientId);
  }
  return client;
}

/** Where each endpoint that authenticates clients is (an assertion's `aud` may name it). */
const ENDPOINT_PATHS: Record<ClientAuthEndpoint, string> = {
  token: '/api/oauth/token',
  revoke: '/api/oauth/revoke',
  device: '/api/oauth/device_authorization',
  introspect: '/api/oauth/introspect',
  par: '/api/oauth/par',
};

/**
 * private_key_jwt (RFC 7523 §2.2, issue 34): `client_assertion_type` jwt-bearer and a `client_assertion` signed by the
 * client, whose `iss` names it (`client_id`, when sent too, must agree). Every refusal is 401 invalid_client, audited
 * with its reason.
 */
async function authenticateWithAssertion(
  ctx: ServiceContext,
  input: ClientCredentialsInput,
  options: ClientAuthOptions,
): Promise<OAuthClientRow> {
  const { clientAssertion: assertion, clientAssertionType: type, clientId: bodyId } = input;
  if (type !== CLIENT_ASSERTION_TYPE) {
    throw new OAuthError('invalid_request', `client_assertion_type must be ${CLIENT_ASSERTION_TYPE}`);
  }
  if (typeof assertion !== 'string' || assertion.length === 0) {
    throw new OAuthError('invalid_request', 'client_assertion must be a single string');
  }
  if (bodyId !== undefined && typeof bodyId !== 'string') throw new OAuthError('invalid_request', 'client_id must be a single string');
  const read = readAssertion(assertion);
  if (!read) throw new ClientAuthFailure(invalidClient(false, 'The client assertion is not a JWT naming its client'), 'malformed');
  const { issuer } = read;
  if (bodyId !== undefined && bodyId !== issuer) {
    throw new ClientAuthFailure(invalidClient(false, 'client_id does not match the client assertion'), 'malformed');
  }
  const { client } = await findClientForRequest(ctx, issuer);
  if (!client) throw new ClientAuthFailure(invalidClient(false), 'unknown_client');
  if (!client.isActive) throw new ClientAuthFailure(invalidClient(false), 'inactive', client.clientId);
  if (client.tokenEndpointAuthMethod !== 'private_key_jwt') {
    throw new ClientAuthFailure(invalidClient(false, 'This client is not registered for private_key_jwt'), 'wrong_method', client.clientId);
  }
  try {
    const endpointUrl = `${ctx.config.baseUrl}${ENDPOINT_PATHS[options.endpoint]}`;
    await verifyClientAssertion(ctx, client, read, endpointUrl, options.beforeSpend);
  } catch (err) {
    if (err instanceof AssertionRefused) throw new ClientAuthFailure(invalidClient(false, err.message), err.reason, client.clientId);
    throw err;
  }
  return client;
}

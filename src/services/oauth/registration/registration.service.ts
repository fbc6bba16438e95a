import { withTransaction } from '../../../db';
import {
  deleteClient,
  findClientById,
  findRegistrationMode,
  insertClient,
  updateClient,
  type JsonWebKeySet,
  type OAuthClientRow,
} from '../../../db/repositories/oauth-clients.repo';
import { consumeRegistrationToken } from '../../../db/repositories/registration-tokens.repo';
import { OAuthError } from '../../../errors';
import { randomToken, safeEqual, sha256Hex } from '../../../lib/crypto';
import type { ServiceContext } from '../../context';
import { checkClientKeys } from '../client-keys';
import { backchannelLogoutUriProblem } from '../../oidc/backchannel-logout.service';
import { DEFAULT_GRANT_TYPES } from '../../../declarations/client-policy';
import { generateClientId, generateClientSecret, verifyClientSecret } from '../client-secrets';
import { openRegistrationResources } from '../resources.service';
import { checkRegistration, clientTypeFor, type RegistrationAuthMethod } from './registration-policy';

/** RFC 7591 §2 client metadata, validated field by field at the edge (registration.schemas.ts). */
export interface ClientMetadataInput {
  clientName?: string;
  redirectUris: string[];
  grantTypes?: string[];
  tokenEndpointAuthMethod?: RegistrationAuthMethod;
  /** The `scope` value, split; undefined when omitted. */
  scopes?: string[];
  clientUri?: string;
  logoUri?: string;
  /** Issue 34: private_key_jwt clients register exactly one of these. */
  jwks?: unknown;
  jwksUri?: string;
  /** RFC 9126 §6. */
  requirePushedAuthorizationRequests?: boolean;
  /** RFC 9449 §5.2. */
  dpopBoundAccessTokens?: boolean;
  /** Browser origins answered CORS; omitted: the default (client-policy.ts corsOriginsOf). */
  allowedOrigins?: string[];
  /** OpenID Connect Back-Channel Logout 1.0 §2.2 (issue 34). */
  backchannelLogoutUri?: string;
  backchannelLogoutSessionRequired?: boolean;
}

/** The back-channel logout metadata as stored, or invalid_client_metadata naming the address problem (issue 34). */
async function judgeBackchannelLogout(ctx: ServiceContext, metadata: ClientMetadataInput) {
  if (metadata.backchannelLogoutUri === undefined) {
    if (metadata.backchannelLogoutSessionRequired) {
      throw new OAuthError('invalid_client_metadata', 'backchannel_logout_session_required needs a backchannel_logout_uri');
    }
    return { uri: null, sessionRequired: false };
  }
  const problem = await backchannelLogoutUriProblem(ctx, metadata.backchannelLogoutUri);
  if (problem) throw new OAuthError('invalid_client_metadata', problem.message);
  return { uri: metadata.backchannelLogoutUri, sessionRequired: metadata.backchannelLogoutSessionRequired ?? false };
}

/** RFC 7592 §2.2: an update names the client it is about, and may repeat the secret (it must then be the right one). */
export interface ClientMetadataUpdate extends ClientMetadataInput {
  clientId?: string;
  clientSecret?: string;
}

export interface RegisteredClient {
  client: OAuthClientRow;
  /** Confidential clients, at registration only (the database keeps its SHA-256). */
  clientSecret?: string;
  /** The token the client manages its registration with (RFC 7592): new at registration, the presented one after. */
  registrationAccessToken: string;
}

/** Scopes a client gets when it registers without `scope` (as an admin-created client does without `scopes`). */
const DEFAULT_SCOPES = ['openid', 'profile', 'email'];
const UNNAMED = 'Unnamed application';
/** Compared against when the client is unknown, so that the answer takes the same time. */
const DUMMY_TOKEN_HASH = sha256Hex('no-such-registration');

const bearerChallenge = (error?: string) => ({ 'WWW-Authenticate': error ? `Bearer error="${error}"` : 'Bearer' });

/** RFC 6750 §3.1: no token is a bare challenge; a wrong one is invalid_token. */
function invalidToken(what: string, presented: boolean): OAuthError {
  return new OAuthError('invalid_token', presented ? `The ${what} is invalid, expired or used up` : `A Bearer ${what} is required`, {
    headers: bearerChallenge(presented ? 'invalid_token' : undefined),
  });
}

/** CONTRACT §13: with CLIENT_REGISTRATION=off the endpoints do not exist. */
export function registrationOff(): OAuthError {
  return new OAuthError('invalid_request', 'Dynamic client registration is not enabled on this server', { status: 404 });
}

function enabledMode(ctx: ServiceContext): 'token' | 'open' {
  const mode = ctx.settings.current.values.client_registration;
  if (mode === 'off') throw registrationOff();
  return mode;
}

async function openResourceScopes(ctx: ServiceContext): Promise<string[]> {
  return (await openRegistrationResources(ctx)).flatMap((r) => r.scopes);
}

/** The registration as this server will store it, or the RFC 7591 §3.2.2 error that refuses it. */
function judge(
  ctx: ServiceContext,
  mode: 'token' | 'open',
  metadata: ClientMetadataInput,
  resourceScopes: readonly string[],
  fixedType?: OAuthClientRow['type'],
  fixedMethod?: OAuthClientRow['tokenEndpointAuthMethod'],
) {
  const type = fixedType ?? clientTypeFor(mode, metadata.tokenEndpointAuthMethod);
  if (fixedType && metadata.tokenEndpointAuthMethod && clientTypeFor(mode, metadata.tokenEndpointAuthMethod) !== fixedType) {
    throw new OAuthError('invalid_client_metadata', 'token_endpoint_auth_method cannot change after registration');
  }
  const grantTypes = metadata.grantTypes ?? [...DEFAULT_GRANT_TYPES];
  const scopes = metadata.scopes ?? DEFAULT_SCOPES;
  const verdict = checkRegistration(
    mode,
    { type, grantTypes, redirectUris: metadata.redirectUris, scopes },
    { resourceScopes, allowHttp: ctx.config.allowHttpRedirectUris },
  );
  if (!verdict.allowed) throw new OAuthError(verdict.error, verdict.reason);
  const privateKeyJwt = metadata.tokenEndpointAuthMethod === 'private_key_jwt';
  if (fixedType && !!fixedMethod && (fixedMethod === 'private_key_jwt') !== privateKeyJwt && metadata.tokenEndpointAuthMethod) {
    throw new OAuthError('invalid_client_metadata', 'token_endpoint_auth_method cannot change after registration');
  }
  let keys: { jwks: JsonWebKeySet | null; jwksUri: string | null } | undefined;
  if (privateKeyJwt || fixedMethod === 'private_key_jwt') {
    const checked = checkClientKeys(metadata, { isProduction: ctx.config.isProduction });
    if (!checked.ok) throw new OAuthError('invalid_client_metadata', checked.reason);
    keys = checked.value;
  } else if (metadata.jwks !== undefined || metadata.jwksUri !== undefined) {
    throw new OAuthError('invalid_client_metadata', 'jwks and jwks_uri are for private_key_jwt clients');
  }
  return {
    keys,
    type,
    grantTypes,
    scopes: verdict.ownScopes,
    name: metadata.clientName ?? UNNAMED,
    redirectUris: metadata.redirectUris,
    clientUri: metadata.clientUri ?? null,
    logoUri: metadata.logoUri ?? null,
    allowedOrigins: metadata.allowedOrigins ?? null,
  };
}

/**
 * RFC 7591 §3: registers a client. With CLIENT_REGISTRATION=token one use of the initial access token is spent in the
 * transaction that creates the client (a refused registration spends nothing); with `open` anyone may register within
 * the narrower rules of registration-policy.ts.
 */
export async function registerClient(
  ctx: ServiceContext,
  input: { metadata: ClientMetadataInput; initialAccessToken?: string },
): Promise<RegisteredClient> {
  const mode = enabledMode(ctx);
  const now = ctx.clock.now();
  const registrationAccessToken = randomToken(32);
  // Read before the transaction: it holds one connection and never waits for a second.
  const resourceScopes = await openResourceScopes(ctx);
  const backchannelLogout = await judgeBackchannelLogout(ctx, input.metadata);
  return withTransaction(ctx.db, async (trx) => {
    let registrationTokenId: string | undefined;
    if (mode === 'token') {
      const presented = input.initialAccessToken;
      const token = presented ? await consumeRegistrationToken(trx, sha256Hex(presented), now) : undefined;
      if (!token) throw invalidToken('initial access token', presented !== undefined);
      registrationTokenId = token.id;
    }
    const judged = judge(ctx, mode, input.metadata, resourceScopes);
    const { secret, secretHash } =
      judged.type === 'confidential' && !judged.keys ? generateClientSecret() : { secret: undefined, secretHash: null };
    const client = await insertClient(trx, {
      clientId: generateClientId(),
      name: judged.name,
      secretHash,
      type: judged.type,
      grantTypes: judged.grantTypes,
      redirectUris: judged.redirectUris,
      scopes: judged.scopes,
      registration: 'dynamic',
      registrationAccessTokenHash: sha256Hex(registrationAccessToken),
      registrationMode: mode,
      clientUri: judged.clientUri,
      logoUri: judged.logoUri,
      privateKeyJwt: judged.keys,
      requirePushedAuthorizationRequests: input.metadata.requirePushedAuthorizationRequests ?? false,
      dpopBoundAccessTokens: input.metadata.dpopBoundAccessTokens ?? false,
      allowedOrigins: judged.allowedOrigins,
      backchannelLogout,
      now,
    });
    await ctx.events.record(trx, {
      type: 'oauth.client.registered',
      subjectId: client.clientId,
      clientId: client.clientId,
      detail: {
        name: client.name,
        type: client.type,
        mode,
        ...(registrationTokenId ? { initial_access_id: registrationTokenId } : {}),
      },
    });
    return { client, clientSecret: secret, registrationAccessToken };
  });
}

/**
 * RFC 7592 §3: the registration access token of a dynamically registered client, compared in constant time with the
 * SHA-256 the client row keeps. An unknown client, an admin-created one and a wrong token answer the same 401.
 */
async function authenticateRegistration(ctx: ServiceContext, clientId: string, token: string | undefined): Promise<RegisteredClient> {
  enabledMode(ctx);
  const client = clientId.length <= 200 ? await findClientById(ctx.db, clientId) : undefined;
  const matches = safeEqual(sha256Hex(token ?? ''), client?.registrationAccessTokenHash ?? DUMMY_TOKEN_HASH);
  if (token === undefined || !client || client.registration !== 'dynamic' || !matches) {
    throw invalidToken('registration access token', token !== undefined);
  }
  return { client, registrationAccessToken: token };
}

/** RFC 7592 §2.1. */
export async function readRegistration(ctx: ServiceContext, clientId: string, token: string | undefined): Promise<RegisteredClient> {
  return authenticateRegistration(ctx, clientId, token);
}

/**
 * RFC 7592 §2.2: the metadata sent replaces the registration (omitted fields take their defaults), judged by the rules
 * of the stricter of the current mode and the mode the client registered under: a registration access token from an
 * `open` registration never stands in for an initial access token. The client type (token_endpoint_auth_method) is
 * fixed at registration.
 */
export async function updateRegistration(
  ctx: ServiceContext,
  clientId: string,
  token: string | undefined,
  metadata: ClientMetadataUpdate,
): Promise<RegisteredClient> {
  const { client: current, registrationAccessToken } = await authenticateRegistration(ctx, clientId, token);
  if (metadata.clientId !== undefined && metadata.clientId !== clientId) {
    throw new OAuthError('invalid_client_metadata', 'client_id does not match the client being updated');
  }
  if (metadata.clientSecret !== undefined && !(current.secretHash && verifyClientSecret(metadata.clientSecret, current.secretHash))) {
    throw new OAuthError('invalid_client_metadata', 'client_secret does not match the client being updated');
  }
  const mode = enabledMode(ctx) === 'token' && (await findRegistrationMode(ctx.db, clientId)) === 'token' ? 'token' : 'open';
  const judged = judge(ctx, mode, metadata, await openResourceScopes(ctx), current.type, current.tokenEndpointAuthMethod);
  const backchannelLogout = await judgeBackchannelLogout(ctx, metadata);
  const client = await withTransaction(ctx.db, async (trx) => {
    const row = await updateClient(
      trx,
      clientId,
      {
        name: judged.name,
        redirectUris: judged.redirectUris,
        grantTypes: judged.grantTypes,
        scopes: judged.scopes,
        clientUri: judged.clientUri,
        logoUri: judged.logoUri,
        ...(judged.keys ? { keys: judged.keys } : {}),
        requirePushedAuthorizationRequests: metadata.requirePushedAuthorizationRequests ?? false,
        dpopBoundAccessTokens: metadata.dpopBoundAccessTokens ?? false,
        allowedOrigins: judged.allowedOrigins,
        backchannelLogoutUri: backchannelLogout.uri,
        backchannelLogoutSessionRequired: backchannelLogout.sessionRequired,
      },
      ctx.clock.now(),
    );
    if (!row) throw invalidToken('registration access token', true);
    await ctx.events.record(trx, {
      type: 'oauth.client.changed',
      subjectId: clientId,
      clientId,
      detail: {
        fields: ['name', 'redirect_uris', 'grant_types', 'scopes', 'client_uri', 'logo_uri', 'allowed_origins', 'backchannel_logout_uri'],
        via: 'registration',
      },
    });
    return row;
  });
  return { client, registrationAccessToken };
}

/** RFC 7592 §2.3: the client, its secret and its registration access token stop working; its sessions end with it. */
export async function deleteRegistration(ctx: ServiceContext, clientId: string, token: string | undefined): Promise<void> {
  const { client } = await authenticateRegistration(ctx, clientId, token);
  await withTransaction(ctx.db, async (trx) => {
    if (!(await deleteClient(trx, clientId))) throw invalidToken('registration access token', true);
    await ctx.events.record(trx, {
      type: 'oauth.client.deleted',
      subjectId: clientId,
      clientId,
      detail: { name: client.name, via: 'registration' },
    });
  });
}

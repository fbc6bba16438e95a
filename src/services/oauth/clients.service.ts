import { changedFields } from '../events';
import { withTransaction } from '../../db';
import {
  findClientById,
  insertClient,
  listClients as listClientRows,
  touchClientLastUsed,
  type ClientRegistration,
  updateClient as updateClientRow,
  type JsonWebKeySet,
  type OAuthClientRow,
} from '../../db/repositories/oauth-clients.repo';
import { burnUnusedCodesOfClient } from '../../db/repositories/oauth-codes.repo';
import { consumePendingRequestsOfClient } from '../../db/repositories/oauth-requests.repo';
import { revokeSessionsOfClient } from '../../db/repositories/sessions.repo';
import { badRequest, found } from '../../errors';
import { say } from '../../i18n';
import { addSeconds } from '../../lib/clock';
import { checkRedirectUri } from '../../lib/redirect-uri';
import type { ServiceContext } from '../context';
import { findApiResourceByIdentifier } from '../../db/repositories/api-resources.repo';
import { checkClientKeys } from './client-keys';
import { assertBackchannelLogoutUriAllowed } from '../oidc/backchannel-logout.service';
import { checkClientShape, type ClientType } from '../../declarations/client-policy';
import { generateClientId, generateClientSecret } from './client-secrets';

/** Input already validated at the edge: redirect URIs pass checkRedirectUri, scopes are within SUPPORTED_SCOPES. */
export interface ClientInput {
  name: string;
  redirectUris: string[];
  scopes: string[];
  /** OIDC RP-Initiated Logout targets, checked like redirect URIs (CONTRACT §9). */
  postLogoutRedirectUris?: string[];
  isActive?: boolean;
  /** CONTRACT §12; fixed at creation. */
  type?: ClientType;
  grantTypes?: string[];
  allowedResources?: string[];
  /** Issue 34: a confidential client that authenticates with private_key_jwt, with one of the two (fixed at creation). */
  privateKeyJwt?: { jwks?: unknown; jwksUri?: string };
  /** RFC 9126 §6 (issue 34): PAR required for this client. */
  requirePushedAuthorizationRequests?: boolean;
  /** RFC 9449 §5.2 (issue 34): every access token of this client must be DPoP-bound. */
  dpopBoundAccessTokens?: boolean;
  /** Issue 34: new keys of a private_key_jwt client (one of the two; the other is cleared). */
  keys?: { jwks?: unknown; jwksUri?: string };
  /** Browser origins answered CORS (docs/apps.md); null or absent: the default (client-policy.ts corsOriginsOf). */
  allowedOrigins?: string[] | null;
  /** OIDC Back-Channel Logout (issue 34); null (or absent at creation): none. */
  backchannelLogoutUri?: string | null;
  backchannelLogoutSessionRequired?: boolean;
}

/** Issue 34: the keys as they will be stored, or the 400 naming the field. */
function judgeKeys(ctx: ServiceContext, keys: { jwks?: unknown; jwksUri?: string }) {
  const verdict = checkClientKeys(keys, { isProduction: ctx.config.isProduction });
  if (!verdict.ok) {
    throw badRequest('Invalid client', [
      { path: keys.jwksUri !== undefined && keys.jwks === undefined ? 'jwks_uri' : 'jwks', message: verdict.reason, said: verdict.said },
    ]);
  }
  return verdict.value;
}

/** The registration as it will be, judged by the client policy, and every allowed resource registered. */
async function assertClientShape(
  ctx: ServiceContext,
  client: { type: ClientType; grantTypes: string[]; redirectUris: string[]; allowedResources: string[] },
): Promise<void> {
  const verdict = checkClientShape(client);
  if (!verdict.allowed) throw badRequest('Invalid client', [{ path: verdict.field, message: verdict.reason, said: verdict.said }]);
  for (const identifier of client.allowedResources) {
    if (!(await findApiResourceByIdentifier(ctx.db, identifier))) {
      throw badRequest('Invalid client', [{ path: 'allowed_resources', ...say('resourceNotRegistered', { identifier }) }]);
    }
  }
}

/**
 * Plain-http redirect URIs off the loopback hosts need ALLOW_HTTP_REDIRECT_URIS=true (CONTRACT §8); the edge schema
 * has checked every other rule already.
 */
function assertRedirectUrisAllowed(ctx: ServiceContext, input: Partial<ClientInput>): void {
  const fields = [
    ['redirect_uris', input.redirectUris],
    ['post_logout_redirect_uris', input.postLogoutRedirectUris],
  ] as const;
  for (const [path, uris] of fields) {
    for (const uri of uris ?? []) {
      // Private-use schemes (RFC 8252 §7.1) as redirect URIs: client-policy.ts decides by client type.
      const check = checkRedirectUri(uri, { allowHttp: ctx.config.allowHttpRedirectUris, allowPrivateUse: path === 'redirect_uris' });
      if (!check.ok) throw badRequest('Invalid redirect URI', [{ path, message: check.reason, said: check.said }]);
    }
  }
}

/** The plain secret is returned here and by rotateClientSecret only; the database keeps its SHA-256 (spec §2.6). */
export async function createClient(ctx: ServiceContext, input: ClientInput): Promise<{ client: OAuthClientRow; clientSecret?: string }> {
  assertRedirectUrisAllowed(ctx, input);
  const type = input.type ?? 'confidential';
  const grantTypes = input.grantTypes ?? ['authorization_code', 'refresh_token'];
  const allowedResources = input.allowedResources ?? [];
  await assertClientShape(ctx, { type, grantTypes, redirectUris: input.redirectUris, allowedResources });
  const privateKeyJwt = input.privateKeyJwt ? judgeKeys(ctx, input.privateKeyJwt) : undefined;
  await assertBackchannelLogoutUriAllowed(ctx, input.backchannelLogoutUri);
  // CONTRACT §12: a public client has no secret at all (token_endpoint_auth_method none); nor has a private_key_jwt one.
  const { secret, secretHash } =
    type === 'confidential' && !privateKeyJwt ? generateClientSecret() : { secret: undefined, secretHash: null };
  const client = await withTransaction(ctx.db, async (trx) => {
    const row = await insertClient(trx, {
      clientId: generateClientId(),
      name: input.name,
      secretHash,
      type,
      grantTypes,
      allowedResources,
      redirectUris: input.redirectUris,
      scopes: input.scopes,
      postLogoutRedirectUris: input.postLogoutRedirectUris ?? [],
      allowedOrigins: input.allowedOrigins ?? null,
      isActive: input.isActive ?? true,
      privateKeyJwt,
      requirePushedAuthorizationRequests: input.requirePushedAuthorizationRequests,
      backchannelLogout: { uri: input.backchannelLogoutUri ?? null, sessionRequired: input.backchannelLogoutSessionRequired ?? false },
      dpopBoundAccessTokens: input.dpopBoundAccessTokens,
      now: ctx.clock.now(),
    });
    await ctx.events.record(trx, {
      type: 'oauth.client.created',
      subjectId: row.clientId,
      clientId: row.clientId,
      detail: { name: row.name },
    });
    return row;
  });
  return { client, clientSecret: secret };
}

export async function listClients(ctx: ServiceContext, filter: { registration?: ClientRegistration } = {}): Promise<OAuthClientRow[]> {
  return listClientRows(ctx.db, filter);
}

/** A use is recorded at most once a day: the prune job only needs to know whether it was within 30 days. */
const LAST_USED_RESOLUTION_SECONDS = 24 * 3600;

/**
 * Records that tokens were issued to a dynamically registered or metadata-document client (CONTRACT §13: unused ones
 * are pruned after 30 days). Judged on the row the token endpoint already holds, so a client used within the day costs
 * no query at all.
 */
export async function noteClientUsed(ctx: ServiceContext, client: OAuthClientRow): Promise<void> {
  if (client.registration === 'admin') return;
  const now = ctx.clock.now();
  const staleBefore = addSeconds(now, -LAST_USED_RESOLUTION_SECONDS);
  if (client.lastUsedAt && client.lastUsedAt > staleBefore) return;
  await touchClientLastUsed(ctx.db, client.clientId, now, staleBefore);
}

export async function getClient(ctx: ServiceContext, clientId: string): Promise<OAuthClientRow> {
  return found(await findClientById(ctx.db, clientId), 'OAuth client');
}

/** `isActive: false` deactivates: the client's sessions are revoked with it (CONTRACT §6), its unused codes and pending consents end. */
export async function updateClient(ctx: ServiceContext, clientId: string, patch: Partial<ClientInput>): Promise<OAuthClientRow> {
  assertRedirectUrisAllowed(ctx, patch);
  // CONTRACT §13: a metadata-document client is what its document says (the next fetch would undo an edit); admins
  // may only deactivate or re-activate it.
  const edited = changedFields(patch).filter((k) => k !== 'isActive');
  if (edited.length > 0 && (await getClient(ctx, clientId)).registration === 'metadata_document') {
    throw badRequest('Invalid client', [{ path: 'registration', ...say('metadataDocumentClient') }]);
  }
  if (patch.redirectUris !== undefined || patch.grantTypes !== undefined || patch.allowedResources !== undefined) {
    const current = await getClient(ctx, clientId);
    await assertClientShape(ctx, {
      type: current.type,
      grantTypes: patch.grantTypes ?? current.grantTypes,
      redirectUris: patch.redirectUris ?? current.redirectUris,
      allowedResources: patch.allowedResources ?? current.allowedResources,
    });
  }
  let keys: { jwks: JsonWebKeySet | null; jwksUri: string | null } | undefined;
  if (patch.keys !== undefined) {
    if ((await getClient(ctx, clientId)).tokenEndpointAuthMethod !== 'private_key_jwt') {
      throw badRequest('Invalid client', [{ path: 'jwks', ...say('keysNotPrivateKeyJwt') }]);
    }
    keys = judgeKeys(ctx, patch.keys);
  }
  await assertBackchannelLogoutUriAllowed(ctx, patch.backchannelLogoutUri);
  const now = ctx.clock.now();
  const client = await withTransaction(ctx.db, async (trx) => {
    const { keys: _keys, privateKeyJwt: _privateKeyJwt, ...rest } = patch;
    const updated = found(await updateClientRow(trx, clientId, { ...rest, keys }, now), 'OAuth client');
    if (patch.isActive === false) {
      // Nothing issued before the deactivation works after a re-activation either: pending consents, unused codes and
      // sessions end with it (lock order of docs/security.md: requests, codes, sessions).
      await consumePendingRequestsOfClient(trx, clientId, now);
      await burnUnusedCodesOfClient(trx, clientId, now);
      await revokeSessionsOfClient(trx, clientId, now);
    }
    const fields = changedFields(patch);
    await ctx.events.record(trx, { type: 'oauth.client.changed', subjectId: clientId, clientId, detail: { fields } });
    if (patch.isActive === false) await ctx.events.record(trx, { type: 'oauth.client.deactivated', subjectId: clientId, clientId });
    return updated;
  });
  return client;
}

/** The old secret stops working at once: its hash is overwritten in the same statement (spec §5.11). */
export async function rotateClientSecret(ctx: ServiceContext, clientId: string): Promise<{ clientId: string; clientSecret: string }> {
  const current = await getClient(ctx, clientId);
  if (current.type === 'public') throw badRequest('A public client has no secret to rotate');
  if (current.tokenEndpointAuthMethod === 'private_key_jwt') throw badRequest('A private_key_jwt client has no secret to rotate');
  const { secret, secretHash } = generateClientSecret();
  const client = await withTransaction(ctx.db, async (trx) => {
    const row = found(await updateClientRow(trx, clientId, { secretHash }, ctx.clock.now()), 'OAuth client');
    await ctx.events.record(trx, { type: 'oauth.client.secret_rotated', subjectId: clientId, clientId });
    return row;
  });
  return { clientId: client.clientId, clientSecret: secret };
}

export async function deactivateClient(ctx: ServiceContext, clientId: string): Promise<OAuthClientRow> {
  return updateClient(ctx, clientId, { isActive: false });
}

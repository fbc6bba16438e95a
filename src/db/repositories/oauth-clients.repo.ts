import { preparedRows, type DbOrTrx } from '..';
import { apiResources, type ApiResourceRecord, type ApiResourceRow } from './api-resources.repo';
import { JSON_STRINGS, parseJsonText } from '../../lib/json-text';
import { corsOriginsOf } from '../../lib/redirect-uri';
import { clientWrite } from './client-writes';

/** CONTRACT §12 (the rules about them: src/declarations/client-policy.ts). */
export type OAuthClientType = 'confidential' | 'public';

/** CONTRACT §13: how the client came to exist (admin API, RFC 7591 registration, Client ID Metadata Document). */
export type ClientRegistration = 'admin' | 'dynamic' | 'metadata_document';

function toRegistration(value: string | null | undefined): ClientRegistration {
  return value === 'dynamic' || value === 'metadata_document' ? value : 'admin';
}

/** RFC 7591 §2 token_endpoint_auth_method of a stored client. */
export type TokenEndpointAuthMethod = 'client_secret_basic' | 'none' | 'private_key_jwt';

/** RFC 7517 JWK Set of public keys. */
export interface JsonWebKeySet {
  keys: Array<import('jose').JWK & Record<string, unknown>>;
  [member: string]: unknown;
}

export interface OAuthClientRow {
  clientId: string;
  name: string;
  /** null for a public client (CONTRACT §12: no secret). */
  secretHash: string | null;
  type: OAuthClientType;
  /** Grants the client may use (CONTRACT §12), checked at every grant. */
  grantTypes: string[];
  /** RFC 8707 resource identifiers the client may ask tokens for. */
  allowedResources: string[];
  redirectUris: string[];
  scopes: string[];
  /** OIDC RP-Initiated Logout: where /api/oauth/logout may send the browser afterwards (CONTRACT §9). */
  postLogoutRedirectUris: string[];
  /** Browser origins set on the client; null: the default (lib/redirect-uri.ts corsOriginsOf). */
  allowedOrigins: string[] | null;
  /** The origins in force (the list above, else the default), kept in step by every write. */
  corsOrigins: string[];
  isActive: boolean;
  /** CONTRACT §13. */
  registration: ClientRegistration;
  /** SHA-256 of the RFC 7592 registration access token; null for admin-created clients. */
  registrationAccessTokenHash: string | null;
  /** RFC 7591 §2 metadata of dynamic clients (https only). */
  clientUri: string | null;
  logoUri: string | null;
  /**
   * RFC 7591 §2 (issue 34): how the client authenticates. client_secret_basic (a confidential client's secret, also
   * accepted in the body), none (a public client) or private_key_jwt (an assertion signed with a key of `jwks` or
   * `jwksUri`; such a client has no secret).
   */
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  /** RFC 9126 §6 (issue 34): the client must push its authorization requests (PAR). */
  requirePushedAuthorizationRequests: boolean;
  /** RFC 9449 §5.2 (issue 34): every access token issued to the client must be DPoP-bound. */
  dpopBoundAccessTokens: boolean;
  /** RFC 7591 §2: the client's public keys, inline (private_key_jwt). */
  jwks: JsonWebKeySet | null;
  /** RFC 7591 §2: where the client publishes its public keys (private_key_jwt), fetched under the outbound rules. */
  jwksUri: string | null;
  /** OIDC Back-Channel Logout 1.0 (issue 34): where the client is told that a session it holds ended; null: never. */
  backchannelLogoutUri: string | null;
  /** OIDC Back-Channel Logout 1.0 §2.2: the client asks for `sid` in logout tokens (always sent here). */
  backchannelLogoutSessionRequired: boolean;
  /**
   * The API resources of `allowedResources` as they are now, read in the same statement as the client by the lookup
   * behind every client authentication (findClientById), so that a grant for one of them makes no second round trip
   * (issue 33); undefined where the row was read otherwise (the grant then reads the resource itself).
   */
  resources?: ApiResourceRow[];
  /** Last time a token was issued to the client (refreshed at most daily); the prune job reads it for dynamic clients. */
  lastUsedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface OAuthClientRecord {
  /** Only from findClientById (json_agg of the allowed API resources). */
  resources?: ApiResourceRecord[] | string;
  client_id: string;
  name: string;
  secret_hash: string | null;
  type: string;
  grant_types: string[] | string;
  allowed_resources: string[] | string;
  redirect_uris: string[] | string;
  scopes: string[] | string;
  post_logout_redirect_uris: string[] | string | null;
  allowed_origins?: string[] | string | null;
  cors_origins?: string[] | string | null;
  is_active: boolean;
  registration?: string | null;
  registration_access_token_hash: string | null;
  registration_mode?: 'token' | 'open' | null;
  client_uri: string | null;
  logo_uri: string | null;
  token_endpoint_auth_method?: string | null;
  require_pushed_authorization_requests?: boolean;
  dpop_bound_access_tokens?: boolean;
  jwks?: JsonWebKeySet | string | null;
  jwks_uri?: string | null;
  backchannel_logout_uri?: string | null;
  backchannel_logout_session_required?: boolean;
  last_used_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

function parseList(value: string[] | string): string[] {
  return typeof value === 'string' ? (parseJsonText(value, JSON_STRINGS) ?? []) : value;
}

function toClientRow(r: OAuthClientRecord): OAuthClientRow {
  return {
    clientId: r.client_id,
    name: r.name,
    secretHash: r.secret_hash,
    type: r.type === 'public' ? 'public' : 'confidential',
    grantTypes: parseList(r.grant_types),
    allowedResources: parseList(r.allowed_resources),
    redirectUris: parseList(r.redirect_uris),
    scopes: parseList(r.scopes),
    postLogoutRedirectUris: parseList(r.post_logout_redirect_uris ?? []),
    allowedOrigins: r.allowed_origins === null || r.allowed_origins === undefined ? null : parseList(r.allowed_origins),
    corsOrigins: parseList(r.cors_origins ?? []),
    isActive: r.is_active,
    registration: toRegistration(r.registration),
    registrationAccessTokenHash: r.registration_access_token_hash,
    clientUri: r.client_uri,
    logoUri: r.logo_uri,
    tokenEndpointAuthMethod:
      r.token_endpoint_auth_method === 'private_key_jwt' ? 'private_key_jwt' : r.type === 'public' ? 'none' : 'client_secret_basic',
    jwks: typeof r.jwks === 'string' ? (JSON.parse(r.jwks) as JsonWebKeySet) : (r.jwks ?? null),
    jwksUri: r.jwks_uri ?? null,
    requirePushedAuthorizationRequests: r.require_pushed_authorization_requests === true,
    backchannelLogoutUri: r.backchannel_logout_uri ?? null,
    backchannelLogoutSessionRequired: r.backchannel_logout_session_required === true,
    dpopBoundAccessTokens: r.dpop_bound_access_tokens === true,
    lastUsedAt: r.last_used_at ? new Date(r.last_used_at) : null,
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
    ...(r.resources
      ? {
          resources: (typeof r.resources === 'string' ? JSON.parse(r.resources) : r.resources).map(apiResources.toRow),
        }
      : {}),
  };
}

export async function insertClient(
  db: DbOrTrx,
  c: {
    clientId: string;
    name: string;
    secretHash: string | null;
    type?: OAuthClientType;
    grantTypes?: readonly string[];
    allowedResources?: readonly string[];
    redirectUris: string[];
    scopes: string[];
    postLogoutRedirectUris?: string[];
    /** null or absent: the default origins (corsOriginsOf). */
    allowedOrigins?: string[] | null;
    isActive?: boolean;
    /** CONTRACT §13: a dynamic registration, with the hash of its registration access token. */
    registration?: ClientRegistration;
    registrationAccessTokenHash?: string;
    /** CONTRACT §13: the CLIENT_REGISTRATION mode a dynamic client registered under. */
    registrationMode?: 'token' | 'open';
    clientUri?: string | null;
    logoUri?: string | null;
    /** Issue 34: private_key_jwt with exactly one of jwks and jwksUri (the caller checked). */
    privateKeyJwt?: { jwks: JsonWebKeySet | null; jwksUri: string | null };
    /** Issue 34: PAR required for this client. */
    requirePushedAuthorizationRequests?: boolean;
    /** Issue 34: OIDC Back-Channel Logout (the caller checked the address). */
    backchannelLogout?: { uri: string | null; sessionRequired: boolean };
    /** Issue 34: DPoP required for this client. */
    dpopBoundAccessTokens?: boolean;
    now: Date;
  },
): Promise<OAuthClientRow> {
  const [row] = await db('oauth_clients')
    .insert({
      client_id: c.clientId,
      name: c.name,
      secret_hash: c.secretHash,
      type: c.type ?? 'confidential',
      grant_types: JSON.stringify(c.grantTypes ?? ['authorization_code', 'refresh_token']),
      allowed_resources: JSON.stringify(c.allowedResources ?? []),
      redirect_uris: JSON.stringify(c.redirectUris),
      scopes: JSON.stringify(c.scopes),
      post_logout_redirect_uris: JSON.stringify(c.postLogoutRedirectUris ?? []),
      allowed_origins: c.allowedOrigins ? JSON.stringify(c.allowedOrigins) : null,
      cors_origins: JSON.stringify(
        corsOriginsOf({ type: c.type ?? 'confidential', redirectUris: c.redirectUris, allowedOrigins: c.allowedOrigins ?? null }),
      ),
      is_active: c.isActive ?? true,
      registration: c.registration ?? 'admin',
      registration_access_token_hash: c.registrationAccessTokenHash ?? null,
      registration_mode: c.registrationMode ?? null,
      client_uri: c.clientUri ?? null,
      logo_uri: c.logoUri ?? null,
      token_endpoint_auth_method: c.privateKeyJwt ? 'private_key_jwt' : null,
      jwks: c.privateKeyJwt?.jwks ? JSON.stringify(c.privateKeyJwt.jwks) : null,
      jwks_uri: c.privateKeyJwt?.jwksUri ?? null,
      require_pushed_authorization_requests: c.requirePushedAuthorizationRequests ?? false,
      backchannel_logout_uri: c.backchannelLogout?.uri ?? null,
      backchannel_logout_session_required: c.backchannelLogout?.sessionRequired ?? false,
      dpop_bound_access_tokens: c.dpopBoundAccessTokens ?? false,
      created_at: c.now,
      updated_at: c.now,
    })
    .returning('*');
  return toClientRow(row);
}

/**
 * One client by id: behind every token, revocation and introspection request (client authentication), so a named
 * prepared statement rather than a built query (issue 10).
 */
export async function findClientById(db: DbOrTrx, clientId: string): Promise<OAuthClientRow | undefined> {
  const [row] = await preparedRows<OAuthClientRecord>(
    db,
    'sso_find_client_12',
    `select client_id, name, secret_hash, type, grant_types, allowed_resources, redirect_uris, scopes, post_logout_redirect_uris,
            allowed_origins, cors_origins, is_active, registration, registration_access_token_hash, client_uri, logo_uri,
            token_endpoint_auth_method, jwks, jwks_uri, require_pushed_authorization_requests, dpop_bound_access_tokens,
            backchannel_logout_uri, backchannel_logout_session_required, last_used_at, created_at, updated_at,
            (select coalesce(json_agg(r), '[]')
               from (select id, identifier, name, scopes, access_token_ttl_s, open_registration, role_based_access,
                            dpop_bound_access_tokens, created_at, updated_at
                       from api_resources
                      where identifier in (select jsonb_array_elements_text(c.allowed_resources))) r) as resources
       from oauth_clients c where client_id = $1`,
    [clientId],
  );
  return row ? toClientRow(row) : undefined;
}

/** The CLIENT_REGISTRATION mode a dynamic client registered under (null for other clients). */
export async function findRegistrationMode(db: DbOrTrx, clientId: string): Promise<'token' | 'open' | null> {
  const row = await db('oauth_clients').where({ client_id: clientId }).first('registration_mode');
  return row?.registration_mode ?? null;
}

export async function listClients(db: DbOrTrx, filter: { registration?: ClientRegistration } = {}): Promise<OAuthClientRow[]> {
  const query = db('oauth_clients').orderBy('created_at', 'desc');
  if (filter.registration) query.where({ registration: filter.registration });
  const rows = await query;
  return rows.map(toClientRow);
}

/** RFC 7592 §2.3: the client is gone; its sessions, codes, pending requests and grants go with it (foreign keys). */
export async function deleteClient(db: DbOrTrx, clientId: string): Promise<boolean> {
  const deleted = await clientWrite(db, () => db('oauth_clients').where({ client_id: clientId }).delete());
  return deleted > 0;
}

/**
 * Records that the client was used, unless a use since `staleBefore` is recorded already: one conditional UPDATE that
 * most calls skip entirely (the caller compares the row it holds first), so a busy client writes at most once a day.
 */
export async function touchClientLastUsed(db: DbOrTrx, clientId: string, now: Date, staleBefore: Date): Promise<void> {
  await db('oauth_clients')
    .where({ client_id: clientId })
    .andWhere((q) => q.whereNull('last_used_at').orWhere('last_used_at', '<', staleBefore))
    .update({ last_used_at: now });
}

export async function updateClient(
  db: DbOrTrx,
  clientId: string,
  patch: Partial<{
    name: string;
    secretHash: string;
    redirectUris: string[];
    scopes: string[];
    postLogoutRedirectUris: string[];
    /** null: back to the default origins. */
    allowedOrigins: string[] | null;
    isActive: boolean;
    grantTypes: readonly string[];
    allowedResources: readonly string[];
    clientUri: string | null;
    logoUri: string | null;
    /** Issue 34: the keys of a private_key_jwt client (exactly one of the two is set). */
    keys: { jwks: JsonWebKeySet | null; jwksUri: string | null };
    requirePushedAuthorizationRequests: boolean;
    /** null: no back-channel logout. */
    backchannelLogoutUri: string | null;
    backchannelLogoutSessionRequired: boolean;
    dpopBoundAccessTokens: boolean;
  }>,
  now: Date,
): Promise<OAuthClientRow | undefined> {
  const record: Record<string, unknown> = { updated_at: now };
  if (patch.name !== undefined) record.name = patch.name;
  if (patch.secretHash !== undefined) record.secret_hash = patch.secretHash;
  if (patch.redirectUris !== undefined) record.redirect_uris = JSON.stringify(patch.redirectUris);
  if (patch.scopes !== undefined) record.scopes = JSON.stringify(patch.scopes);
  if (patch.postLogoutRedirectUris !== undefined) record.post_logout_redirect_uris = JSON.stringify(patch.postLogoutRedirectUris);
  if (patch.isActive !== undefined) record.is_active = patch.isActive;
  if (patch.grantTypes !== undefined) record.grant_types = JSON.stringify(patch.grantTypes);
  if (patch.allowedResources !== undefined) record.allowed_resources = JSON.stringify(patch.allowedResources);
  if (patch.clientUri !== undefined) record.client_uri = patch.clientUri;
  if (patch.logoUri !== undefined) record.logo_uri = patch.logoUri;
  if (patch.requirePushedAuthorizationRequests !== undefined) {
    record.require_pushed_authorization_requests = patch.requirePushedAuthorizationRequests;
  }
  if (patch.backchannelLogoutUri !== undefined) record.backchannel_logout_uri = patch.backchannelLogoutUri;
  if (patch.backchannelLogoutSessionRequired !== undefined) {
    record.backchannel_logout_session_required = patch.backchannelLogoutSessionRequired;
  }
  if (patch.dpopBoundAccessTokens !== undefined) record.dpop_bound_access_tokens = patch.dpopBoundAccessTokens;
  if (patch.keys !== undefined) {
    record.jwks = patch.keys.jwks ? JSON.stringify(patch.keys.jwks) : null;
    record.jwks_uri = patch.keys.jwksUri;
  }
  if (patch.allowedOrigins !== undefined) {
    record.allowed_origins = patch.allowedOrigins === null ? null : JSON.stringify(patch.allowedOrigins);
  }
  if (patch.redirectUris !== undefined || patch.allowedOrigins !== undefined) {
    // The origins in force follow the redirect URIs or the list set (read under the caller's transaction).
    const current = await db('oauth_clients').where({ client_id: clientId }).forUpdate().first();
    if (!current) return undefined;
    const before = toClientRow(current);
    const allowedOrigins = patch.allowedOrigins !== undefined ? patch.allowedOrigins : before.allowedOrigins;
    const redirectUris = patch.redirectUris ?? before.redirectUris;
    record.cors_origins = JSON.stringify(corsOriginsOf({ type: before.type, redirectUris, allowedOrigins }));
  }
  const [row] = await clientWrite(db, () => db('oauth_clients').where({ client_id: clientId }).update(record).returning('*'));
  return row ? toClientRow(row) : undefined;
}

export async function countClients(db: DbOrTrx): Promise<{ total: number; active: number }> {
  const row = await db('oauth_clients').first<{ total: string; active: string } | undefined>(
    db.raw('count(*) as total'),
    db.raw('count(*) filter (where is_active) as active'),
  );
  return { total: Number(row?.total ?? 0), active: Number(row?.active ?? 0) };
}

/**
 * The row of a Client ID Metadata Document client (CONTRACT §13), created on first use or brought in step with the
 * document. One statement, so concurrent first uses of one URL end with one row. An existing row of another kind of
 * client is never touched, and neither is `is_active` (an admin's deactivation stays): the caller judges both on
 * the row this returns.
 */
export async function upsertMetadataDocumentClient(
  db: DbOrTrx,
  c: {
    clientId: string;
    name: string;
    redirectUris: string[];
    scopes: string[];
    allowedResources: string[];
    grantTypes: string[];
    /** Issue 34: set when the document declares private_key_jwt (the client is then confidential). */
    jwksUri: string | null;
    /** Issue 34: the document requires DPoP-bound access tokens (RFC 9449 §5.2). */
    dpopBoundAccessTokens: boolean;
    now: Date;
  },
): Promise<{ row: OAuthClientRow; created: boolean; changed: boolean }> {
  const result = await clientWrite(db, () =>
    db.raw<{ rows: Array<OAuthClientRecord & { inserted: boolean }> }>(
      `insert into oauth_clients as c
            (client_id, name, secret_hash, type, grant_types, allowed_resources, redirect_uris, cors_origins, scopes,
             post_logout_redirect_uris, is_active, registration, token_endpoint_auth_method, jwks_uri, dpop_bound_access_tokens,
             created_at, updated_at)
     values (?, ?, null, ?, ?::jsonb, ?::jsonb, ?::jsonb, ?::jsonb, ?::jsonb, '[]'::jsonb, true, 'metadata_document', ?, ?, ?, ?, ?)
     on conflict (client_id) do update
        set name = excluded.name, grant_types = excluded.grant_types, allowed_resources = excluded.allowed_resources,
            redirect_uris = excluded.redirect_uris, cors_origins = excluded.cors_origins, scopes = excluded.scopes,
            type = excluded.type, token_endpoint_auth_method = excluded.token_endpoint_auth_method, jwks_uri = excluded.jwks_uri,
            dpop_bound_access_tokens = excluded.dpop_bound_access_tokens, updated_at = excluded.updated_at
      where c.registration = 'metadata_document'
        and (c.name, c.grant_types, c.allowed_resources, c.redirect_uris, c.scopes, c.type, c.token_endpoint_auth_method, c.jwks_uri,
             c.dpop_bound_access_tokens)
            is distinct from (excluded.name, excluded.grant_types, excluded.allowed_resources, excluded.redirect_uris, excluded.scopes,
                              excluded.type, excluded.token_endpoint_auth_method, excluded.jwks_uri, excluded.dpop_bound_access_tokens)
     returning *, (xmax = 0) as inserted`,
      [
        c.clientId,
        c.name,
        c.jwksUri ? 'confidential' : 'public',
        JSON.stringify(c.grantTypes),
        JSON.stringify(c.allowedResources),
        JSON.stringify(c.redirectUris),
        JSON.stringify(corsOriginsOf({ type: c.jwksUri ? 'confidential' : 'public', redirectUris: c.redirectUris, allowedOrigins: null })),
        JSON.stringify(c.scopes),
        c.jwksUri ? 'private_key_jwt' : null,
        c.jwksUri,
        c.dpopBoundAccessTokens,
        c.now,
        c.now,
      ],
    ),
  );
  const [written] = result.rows;
  if (written) return { row: toClientRow(written), created: written.inserted, changed: !written.inserted };
  // Nothing written: the row exists and is already in step, or belongs to another kind of client.
  const row = await findClientById(db, c.clientId);
  if (!row) throw new Error(`oauth client ${c.clientId}: neither written nor found`);
  return { row, created: false, changed: false };
}

/**
 * Whether an active client lists this browser origin (a CORS preflight names no client: it is answered for any
 * registered origin). One lookup on the GIN index of `cors_origins`.
 */
export async function isRegisteredCorsOrigin(db: DbOrTrx, origin: string): Promise<boolean> {
  const row = await db('oauth_clients')
    .whereRaw('cors_origins @> ?::jsonb', [JSON.stringify([origin])])
    .andWhere({ is_active: true })
    .first(db.raw('1 as found'));
  return row !== undefined;
}

/** The names of these clients (the audit log shows applications by name); unknown ids are absent. */
export async function findClientNames(db: DbOrTrx, clientIds: readonly string[]): Promise<Array<{ clientId: string; name: string }>> {
  if (clientIds.length === 0) return [];
  const rows: Array<{ client_id: string; name: string }> = await db('oauth_clients')
    .select('client_id', 'name')
    .whereIn('client_id', [...new Set(clientIds)]);
  return rows.map((r) => ({ clientId: r.client_id, name: r.name }));
}

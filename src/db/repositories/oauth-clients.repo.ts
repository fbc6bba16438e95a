import { preparedRows, type DbOrTrx } from '..';

/** CONTRACT §12 (the rules about them: services/oauth/client-policy.ts). */
export type OAuthClientType = 'confidential' | 'public';

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
  isActive: boolean;
  createdAt: Date;
  updatedAt: Date;
}

interface OAuthClientRecord {
  client_id: string;
  name: string;
  secret_hash: string | null;
  type: string;
  grant_types: string[] | string;
  allowed_resources: string[] | string;
  redirect_uris: string[] | string;
  scopes: string[] | string;
  post_logout_redirect_uris: string[] | string | null;
  is_active: boolean;
  created_at: Date;
  updated_at: Date;
}

function parseList(value: string[] | string): string[] {
  return typeof value === 'string' ? (JSON.parse(value) as string[]) : value;
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
    isActive: r.is_active,
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
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
    isActive?: boolean;
    now: Date;
  },
): Promise<OAuthClientRow> {
  const [row] = await db<OAuthClientRecord>('oauth_clients')
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
      is_active: c.isActive ?? true,
      created_at: c.now,
      updated_at: c.now,
    })
    .returning('*');
  return toClientRow(row!);
}

/**
 * One client by id: behind every token, revocation and introspection request (client authentication), so a named
 * prepared statement rather than a built query (issue 10).
 */
export async function findClientById(db: DbOrTrx, clientId: string): Promise<OAuthClientRow | undefined> {
  const [row] = await preparedRows(
    db,
    'sso_find_client_4',
    `select client_id, name, secret_hash, type, grant_types, allowed_resources, redirect_uris, scopes, post_logout_redirect_uris,
            is_active, created_at, updated_at
       from oauth_clients where client_id = $1`,
    [clientId],
  );
  return row ? toClientRow(row as unknown as OAuthClientRecord) : undefined;
}

export async function listClients(db: DbOrTrx): Promise<OAuthClientRow[]> {
  const rows = await db<OAuthClientRecord>('oauth_clients').orderBy('created_at', 'desc');
  return rows.map(toClientRow);
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
    isActive: boolean;
    grantTypes: readonly string[];
    allowedResources: readonly string[];
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
  const [row] = await db<OAuthClientRecord>('oauth_clients').where({ client_id: clientId }).update(record).returning('*');
  return row ? toClientRow(row) : undefined;
}

export async function countClients(db: DbOrTrx): Promise<{ total: number; active: number }> {
  const row = await db('oauth_clients').select(db.raw('count(*) as total'), db.raw('count(*) filter (where is_active) as active')).first();
  return { total: Number(row?.total ?? 0), active: Number(row?.active ?? 0) };
}

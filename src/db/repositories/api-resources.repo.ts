import { preparedRows, type DbOrTrx } from '..';
import { clientWrite } from './client-writes';

/** An API that accepts our RFC 9068 access tokens (CONTRACT §12, RFC 8707). */
export interface ApiResourceRow extends ApiResourceFields {
  id: string;
  dpopBoundAccessTokens: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export interface ApiResourceRecord {
  id: string;
  identifier: string;
  name: string;
  /** jsonb, parsed by pg (written as JSON text). */
  scopes: string[];
  access_token_ttl_s: number;
  open_registration: boolean;
  role_based_access: boolean;
  dpop_bound_access_tokens?: boolean;
  created_at: Date;
  updated_at: Date;
}

export function toApiResourceRow(r: ApiResourceRecord): ApiResourceRow {
  return {
    id: r.id,
    identifier: r.identifier,
    name: r.name,
    scopes: r.scopes,
    accessTokenTtlSeconds: Number(r.access_token_ttl_s),
    openRegistration: r.open_registration,
    roleBasedAccess: r.role_based_access,
    dpopBoundAccessTokens: r.dpop_bound_access_tokens === true,
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
  };
}

export interface ApiResourceFields {
  identifier: string;
  name: string;
  scopes: string[];
  accessTokenTtlSeconds: number;
  openRegistration: boolean;
  /** A user-delegated token carries only the scopes the user's roles grant for this API (docs/rbac.md). */
  roleBasedAccess: boolean;
  /** RFC 9449 (issue 34): every access token for this API must be DPoP-bound. */
  dpopBoundAccessTokens?: boolean;
}

export async function insertApiResource(db: DbOrTrx, r: ApiResourceFields & { id: string; now: Date }): Promise<ApiResourceRow> {
  const [row] = await clientWrite(db, () =>
    db('api_resources')
      .insert({
        id: r.id,
        identifier: r.identifier,
        name: r.name,
        scopes: JSON.stringify(r.scopes),
        access_token_ttl_s: r.accessTokenTtlSeconds,
        open_registration: r.openRegistration,
        role_based_access: r.roleBasedAccess,
        dpop_bound_access_tokens: r.dpopBoundAccessTokens ?? false,
        created_at: r.now,
        updated_at: r.now,
      })
      .returning('*'),
  );
  return toApiResourceRow(row);
}

export async function listApiResources(db: DbOrTrx): Promise<ApiResourceRow[]> {
  const rows = await db('api_resources').orderBy('identifier');
  return rows.map((r) => toApiResourceRow(r));
}

/** CONTRACT §12/§13: the APIs self-registered and metadata-document clients may ask tokens for. */
export async function listOpenRegistrationResources(db: DbOrTrx): Promise<ApiResourceRow[]> {
  const rows = await db('api_resources').where({ open_registration: true }).orderBy('identifier');
  return rows.map((r) => toApiResourceRow(r));
}

export async function findApiResourceById(db: DbOrTrx, id: string): Promise<ApiResourceRow | undefined> {
  const row = await db('api_resources').where({ id }).first();
  return row ? toApiResourceRow(row) : undefined;
}

/** Behind every token request that names a resource: a named prepared statement rather than a built query (issue 10). */
export async function findApiResourceByIdentifier(db: DbOrTrx, identifier: string): Promise<ApiResourceRow | undefined> {
  const [row] = await preparedRows<ApiResourceRecord>(db, 'sso_find_api_resource_3', `${SELECT_RESOURCE} where identifier = $1`, [
    identifier,
  ]);
  return row ? toApiResourceRow(row) : undefined;
}

const SELECT_RESOURCE =
  'select id, identifier, name, scopes, access_token_ttl_s, open_registration, role_based_access, dpop_bound_access_tokens, created_at, updated_at from api_resources';

export async function updateApiResource(
  db: DbOrTrx,
  id: string,
  patch: Partial<ApiResourceFields>,
  now: Date,
): Promise<ApiResourceRow | undefined> {
  const record: Record<string, unknown> = { updated_at: now };
  if (patch.identifier !== undefined) record.identifier = patch.identifier;
  if (patch.name !== undefined) record.name = patch.name;
  if (patch.scopes !== undefined) record.scopes = JSON.stringify(patch.scopes);
  if (patch.accessTokenTtlSeconds !== undefined) record.access_token_ttl_s = patch.accessTokenTtlSeconds;
  if (patch.openRegistration !== undefined) record.open_registration = patch.openRegistration;
  if (patch.roleBasedAccess !== undefined) record.role_based_access = patch.roleBasedAccess;
  if (patch.dpopBoundAccessTokens !== undefined) record.dpop_bound_access_tokens = patch.dpopBoundAccessTokens;
  const [row] = await clientWrite(db, () => db('api_resources').where({ id }).update(record).returning('*'));
  return row ? toApiResourceRow(row) : undefined;
}

export async function deleteApiResource(db: DbOrTrx, id: string): Promise<ApiResourceRow | undefined> {
  const [row] = await clientWrite(db, () => db('api_resources').where({ id }).delete().returning('*'));
  return row ? toApiResourceRow(row) : undefined;
}

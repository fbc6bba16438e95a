import { preparedRows, type DbOrTrx } from '..';
import { date, flag, named, num, same, type RecordOf, type RowOf } from '../rows';
import { table } from '../table';
import { clientWrite } from './client-writes';

/** An API that accepts our RFC 9068 access tokens (CONTRACT §12, RFC 8707). */
export const apiResources = table('api_resources', {
  id: same<string>(),
  identifier: same<string>(),
  name: same<string>(),
  /** jsonb, parsed by pg (written as JSON text). */
  scopes: same<string[]>(),
  accessTokenTtlSeconds: named('access_token_ttl_s', num),
  openRegistration: same<boolean>(),
  /** A user-delegated token carries only the scopes the user's roles grant for this API (docs/rbac.md). */
  roleBasedAccess: same<boolean>(),
  /** RFC 9449 (issue 34): every access token for this API must be DPoP-bound. */
  dpopBoundAccessTokens: flag,
  createdAt: date,
  updatedAt: date,
});
export type ApiResourceRow = RowOf<typeof apiResources.columns>;
export type ApiResourceRecord = RecordOf<typeof apiResources.columns>;

/** What an admin sets; `dpopBoundAccessTokens` defaults to false. */
export type ApiResourceFields = Omit<ApiResourceRow, 'id' | 'createdAt' | 'updatedAt' | 'dpopBoundAccessTokens'> &
  Partial<Pick<ApiResourceRow, 'dpopBoundAccessTokens'>>;

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
  return apiResources.toRow(row);
}

export const listApiResources = (db: DbOrTrx) => apiResources.list(db, {}, ['identifier']);

/** CONTRACT §12/§13: the APIs self-registered and metadata-document clients may ask tokens for. */
export const listOpenRegistrationResources = (db: DbOrTrx) => apiResources.list(db, { open_registration: true }, ['identifier']);

export const findApiResourceById = (db: DbOrTrx, id: string) => apiResources.find(db, { id });

/** Behind every token request that names a resource: a named prepared statement rather than a built query (issue 10). */
export async function findApiResourceByIdentifier(db: DbOrTrx, identifier: string): Promise<ApiResourceRow | undefined> {
  const [row] = await preparedRows<ApiResourceRecord>(db, 'sso_find_api_resource_3', `${SELECT_RESOURCE} where identifier = $1`, [
    identifier,
  ]);
  return row ? apiResources.toRow(row) : undefined;
}

const SELECT_RESOURCE =
  'select id, identifier, name, scopes, access_token_ttl_s, open_registration, role_based_access, dpop_bound_access_tokens, created_at, updated_at from api_resources';

export async function updateApiResource(
  db: DbOrTrx,
  id: string,
  patch: Partial<ApiResourceFields>,
  now: Date,
): Promise<ApiResourceRow | undefined> {
  // The fields given, by their columns (the jsonb scopes as JSON text); Knex leaves undefined ones out of the UPDATE.
  const record = {
    ...apiResources.toRecord(patch),
    scopes: patch.scopes === undefined ? undefined : JSON.stringify(patch.scopes),
    updated_at: now,
  };
  const [row] = await clientWrite(db, () => db('api_resources').where({ id }).update(record).returning('*'));
  return row ? apiResources.toRow(row) : undefined;
}

export async function deleteApiResource(db: DbOrTrx, id: string): Promise<ApiResourceRow | undefined> {
  const [row] = await clientWrite(db, () => db('api_resources').where({ id }).delete().returning('*'));
  return row ? apiResources.toRow(row) : undefined;
}

import type { DbOrTrx } from '..';
import { UUID_PATTERN } from '../../lib/ids';
import { date, recordWriter, rowMapper, same, type RecordOf, type RowOf } from '../rows';

export type IdentityProviderType = 'oidc' | 'github';

const identityProviderColumns = {
  id: same<string>(),
  slug: same<string>(),
  name: same<string>(),
  type: same<IdentityProviderType>(),
  issuer: same<string | null>(),
  baseUrl: same<string | null>(),
  apiBaseUrl: same<string | null>(),
  clientId: same<string>(),
  /** AES-GCM sealed (lib/sealed.ts); never presented. */
  clientSecretSealed: same<string | null>(),
  scopes: same<string>(),
  enabled: same<boolean>(),
  trustEmail: same<boolean>(),
  allowSignup: same<boolean>(),
  createdAt: date,
  updatedAt: date,
};

export type IdentityProviderRow = RowOf<typeof identityProviderColumns>;
export type IdentityProviderRecord = RecordOf<typeof identityProviderColumns>;
const toRow = rowMapper(identityProviderColumns);

export type IdentityProviderFields = Omit<IdentityProviderRow, 'id' | 'createdAt' | 'updatedAt'>;

const toRecord: (p: Partial<IdentityProviderFields>) => Partial<IdentityProviderRecord> = recordWriter(identityProviderColumns);

export async function listIdentityProviders(db: DbOrTrx, options: { enabledOnly?: boolean } = {}): Promise<IdentityProviderRow[]> {
  const q = db('identity_providers').orderBy([{ column: 'name' }, { column: 'slug' }]);
  if (options.enabledOnly) q.where({ enabled: true });
  return (await q).map(toRow);
}

export async function findIdentityProviderById(db: DbOrTrx, id: string): Promise<IdentityProviderRow | undefined> {
  if (!UUID_PATTERN.test(id)) return undefined;
  const row = await db('identity_providers').where({ id }).first();
  return row ? toRow(row) : undefined;
}

export async function findIdentityProviderBySlug(db: DbOrTrx, slug: string): Promise<IdentityProviderRow | undefined> {
  const row = await db('identity_providers').where({ slug }).first();
  return row ? toRow(row) : undefined;
}

export async function insertIdentityProvider(
  db: DbOrTrx,
  id: string,
  fields: IdentityProviderFields,
  now: Date,
): Promise<IdentityProviderRow> {
  const [row] = await db('identity_providers')
    .insert({ id, ...toRecord(fields), created_at: now, updated_at: now })
    .returning('*');
  return toRow(row);
}

export async function updateIdentityProvider(
  db: DbOrTrx,
  id: string,
  fields: Partial<IdentityProviderFields>,
  now: Date,
): Promise<IdentityProviderRow | undefined> {
  if (!UUID_PATTERN.test(id)) return undefined;
  const [row] = await db('identity_providers')
    .where({ id })
    .update({ ...toRecord(fields), updated_at: now })
    .returning('*');
  return row ? toRow(row) : undefined;
}

export async function deleteIdentityProvider(db: DbOrTrx, id: string): Promise<boolean> {
  if (!UUID_PATTERN.test(id)) return false;
  return (await db('identity_providers').where({ id }).delete()) === 1;
}

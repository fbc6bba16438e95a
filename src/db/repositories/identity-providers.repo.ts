import type { DbOrTrx } from '..';
import { UUID_PATTERN } from '../../lib/ids';
import { date, same, type RowOf } from '../rows';
import { table } from '../table';

export type IdentityProviderType = 'oidc' | 'github';

export const identityProviders = table('identity_providers', {
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
});
export type IdentityProviderRow = RowOf<typeof identityProviders.columns>;

export type IdentityProviderFields = Omit<IdentityProviderRow, 'id' | 'createdAt' | 'updatedAt'>;

export const listIdentityProviders = (db: DbOrTrx, options: { enabledOnly?: boolean } = {}) =>
  identityProviders.list(db, options.enabledOnly ? { enabled: true } : {}, ['name', 'slug']);

export const findIdentityProviderById = async (db: DbOrTrx, id: string) =>
  UUID_PATTERN.test(id) ? identityProviders.find(db, { id }) : undefined;

export const findIdentityProviderBySlug = (db: DbOrTrx, slug: string) => identityProviders.find(db, { slug });

export const insertIdentityProvider = (db: DbOrTrx, id: string, fields: IdentityProviderFields, now: Date) =>
  identityProviders.insert(db, { id, ...identityProviders.toRecord(fields), created_at: now, updated_at: now });

export const updateIdentityProvider = async (db: DbOrTrx, id: string, fields: Partial<IdentityProviderFields>, now: Date) =>
  UUID_PATTERN.test(id) ? identityProviders.update(db, { id }, { ...identityProviders.toRecord(fields), updated_at: now }) : undefined;

export const deleteIdentityProvider = async (db: DbOrTrx, id: string) =>
  UUID_PATTERN.test(id) && (await identityProviders.delete(db, { id })) === 1;

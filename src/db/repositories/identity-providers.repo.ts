import type { DbOrTrx } from '..';
import { UUID_PATTERN } from '../../lib/ids';

export type IdentityProviderType = 'oidc' | 'github';

export interface IdentityProviderRow {
  id: string;
  slug: string;
  name: string;
  type: IdentityProviderType;
  issuer: string | null;
  baseUrl: string | null;
  apiBaseUrl: string | null;
  clientId: string;
  /** AES-GCM sealed (lib/sealed.ts); never presented. */
  clientSecretSealed: string | null;
  scopes: string;
  enabled: boolean;
  trustEmail: boolean;
  allowSignup: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export interface IdentityProviderRecord {
  id: string;
  slug: string;
  name: string;
  type: IdentityProviderType;
  issuer: string | null;
  base_url: string | null;
  api_base_url: string | null;
  client_id: string;
  client_secret_sealed: string | null;
  scopes: string;
  enabled: boolean;
  trust_email: boolean;
  allow_signup: boolean;
  created_at: Date;
  updated_at: Date;
}

function toRow(r: IdentityProviderRecord): IdentityProviderRow {
  return {
    id: r.id,
    slug: r.slug,
    name: r.name,
    type: r.type,
    issuer: r.issuer,
    baseUrl: r.base_url,
    apiBaseUrl: r.api_base_url,
    clientId: r.client_id,
    clientSecretSealed: r.client_secret_sealed,
    scopes: r.scopes,
    enabled: r.enabled,
    trustEmail: r.trust_email,
    allowSignup: r.allow_signup,
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
  };
}

export type IdentityProviderFields = Omit<IdentityProviderRow, 'id' | 'createdAt' | 'updatedAt'>;

function toRecord(p: Partial<IdentityProviderFields>): Partial<IdentityProviderRecord> {
  const out: Partial<IdentityProviderRecord> = {};
  if (p.slug !== undefined) out.slug = p.slug;
  if (p.name !== undefined) out.name = p.name;
  if (p.type !== undefined) out.type = p.type;
  if (p.issuer !== undefined) out.issuer = p.issuer;
  if (p.baseUrl !== undefined) out.base_url = p.baseUrl;
  if (p.apiBaseUrl !== undefined) out.api_base_url = p.apiBaseUrl;
  if (p.clientId !== undefined) out.client_id = p.clientId;
  if (p.clientSecretSealed !== undefined) out.client_secret_sealed = p.clientSecretSealed;
  if (p.scopes !== undefined) out.scopes = p.scopes;
  if (p.enabled !== undefined) out.enabled = p.enabled;
  if (p.trustEmail !== undefined) out.trust_email = p.trustEmail;
  if (p.allowSignup !== undefined) out.allow_signup = p.allowSignup;
  return out;
}

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

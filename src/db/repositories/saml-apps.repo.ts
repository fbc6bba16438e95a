import type { DbOrTrx } from '..';

export type SamlNameIdFormat = 'emailAddress' | 'persistent' | 'transient' | 'unspecified';
export type SamlSloBinding = 'HTTP-Redirect' | 'HTTP-POST';

export interface SamlAcsUrl {
  url: string;
  binding: 'HTTP-POST';
  index: number;
  default: boolean;
}

export interface SamlAttributeNames {
  email: string;
  given_name: string;
  family_name: string;
  name: string;
  roles: string;
}

/** A registered service provider (CONTRACT §19). */
export interface SamlAppRow {
  id: string;
  name: string;
  entityId: string;
  acsUrls: SamlAcsUrl[];
  sloUrl: string | null;
  sloBinding: SamlSloBinding;
  nameIdFormat: SamlNameIdFormat;
  attributes: SamlAttributeNames;
  signResponse: boolean;
  signAssertion: boolean;
  encryptAssertion: boolean;
  wantAuthnRequestsSigned: boolean;
  spCertificate: string | null;
  /** From the SP's metadata when its encryption certificate is not its signing one; else null (sp_certificate serves). */
  spEncryptionCertificate: string | null;
  enabled: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export type SamlAppFields = Omit<SamlAppRow, 'id' | 'createdAt' | 'updatedAt'>;

export interface SamlAppRecord {
  id: string;
  name: string;
  entity_id: string;
  acs_urls: SamlAcsUrl[];
  slo_url: string | null;
  slo_binding: SamlSloBinding;
  name_id_format: SamlNameIdFormat;
  attributes: SamlAttributeNames;
  sign_response: boolean;
  sign_assertion: boolean;
  encrypt_assertion: boolean;
  want_authn_requests_signed: boolean;
  sp_certificate: string | null;
  sp_encryption_certificate: string | null;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

const toRow = (r: SamlAppRecord): SamlAppRow => ({
  id: r.id,
  name: r.name,
  entityId: r.entity_id,
  acsUrls: r.acs_urls,
  sloUrl: r.slo_url,
  sloBinding: r.slo_binding,
  nameIdFormat: r.name_id_format,
  attributes: r.attributes,
  signResponse: r.sign_response,
  signAssertion: r.sign_assertion,
  encryptAssertion: r.encrypt_assertion,
  wantAuthnRequestsSigned: r.want_authn_requests_signed,
  spCertificate: r.sp_certificate,
  spEncryptionCertificate: r.sp_encryption_certificate,
  enabled: r.enabled,
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
});

const toRecord = (f: SamlAppFields) => ({
  name: f.name,
  entity_id: f.entityId,
  acs_urls: JSON.stringify(f.acsUrls),
  slo_url: f.sloUrl,
  slo_binding: f.sloBinding,
  name_id_format: f.nameIdFormat,
  attributes: JSON.stringify(f.attributes),
  sign_response: f.signResponse,
  sign_assertion: f.signAssertion,
  encrypt_assertion: f.encryptAssertion,
  want_authn_requests_signed: f.wantAuthnRequestsSigned,
  sp_certificate: f.spCertificate,
  sp_encryption_certificate: f.spEncryptionCertificate,
  enabled: f.enabled,
});

export async function listSamlApps(db: DbOrTrx): Promise<SamlAppRow[]> {
  return (await db('saml_apps').orderBy('name').orderBy('id')).map(toRow);
}

export async function findSamlAppById(db: DbOrTrx, id: string): Promise<SamlAppRow | undefined> {
  const row = await db('saml_apps').where({ id }).first();
  return row ? toRow(row) : undefined;
}

export async function findSamlAppByEntityId(db: DbOrTrx, entityId: string): Promise<SamlAppRow | undefined> {
  const row = await db('saml_apps').where({ entity_id: entityId }).first();
  return row ? toRow(row) : undefined;
}

/** Undefined when the entity id is taken (unique index). */
export async function insertSamlApp(db: DbOrTrx, id: string, f: SamlAppFields, now: Date): Promise<SamlAppRow | undefined> {
  const [row] = await db('saml_apps')
    .insert({ id, ...toRecord(f), created_at: now, updated_at: now })
    .onConflict('entity_id')
    .ignore()
    .returning('*');
  return row ? toRow(row) : undefined;
}

export async function updateSamlApp(db: DbOrTrx, id: string, f: SamlAppFields, now: Date): Promise<SamlAppRow | undefined> {
  const [row] = await db('saml_apps')
    .where({ id })
    .update({ ...toRecord(f), updated_at: now })
    .returning('*');
  return row ? toRow(row) : undefined;
}

export async function deleteSamlApp(db: DbOrTrx, id: string): Promise<boolean> {
  return (await db('saml_apps').where({ id }).delete()) > 0;
}

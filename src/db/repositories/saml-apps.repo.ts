import type { DbOrTrx } from '..';
import { date, same, type RowOf } from '../rows';
import { table } from '../table';

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
export const samlApps = table('saml_apps', {
  id: same<string>(),
  name: same<string>(),
  entityId: same<string>(),
  acsUrls: same<SamlAcsUrl[]>(),
  sloUrl: same<string | null>(),
  sloBinding: same<SamlSloBinding>(),
  nameIdFormat: same<SamlNameIdFormat>(),
  attributes: same<SamlAttributeNames>(),
  signResponse: same<boolean>(),
  signAssertion: same<boolean>(),
  encryptAssertion: same<boolean>(),
  wantAuthnRequestsSigned: same<boolean>(),
  spCertificate: same<string | null>(),
  /** From the SP's metadata when its encryption certificate is not its signing one; else null (sp_certificate serves). */
  spEncryptionCertificate: same<string | null>(),
  enabled: same<boolean>(),
  createdAt: date,
  updatedAt: date,
});
export type SamlAppRow = RowOf<typeof samlApps.columns>;
export type SamlAppFields = Omit<SamlAppRow, 'id' | 'createdAt' | 'updatedAt'>;
/** The jsonb columns are written as JSON text. */
const toRecord = (f: SamlAppFields) => ({
  ...samlApps.toRecord(f),
  acs_urls: JSON.stringify(f.acsUrls),
  attributes: JSON.stringify(f.attributes),
});

export const listSamlApps = (db: DbOrTrx) => samlApps.list(db, {}, ['name', 'id']);

export const findSamlAppById = (db: DbOrTrx, id: string) => samlApps.find(db, { id });

export const findSamlAppByEntityId = (db: DbOrTrx, entityId: string) => samlApps.find(db, { entity_id: entityId });

/** Undefined when the entity id is taken (unique index). */
export async function insertSamlApp(db: DbOrTrx, id: string, f: SamlAppFields, now: Date): Promise<SamlAppRow | undefined> {
  const [row] = await db('saml_apps')
    .insert({ id, ...toRecord(f), created_at: now, updated_at: now })
    .onConflict('entity_id')
    .ignore()
    .returning('*');
  return row ? samlApps.toRow(row) : undefined;
}

export const updateSamlApp = (db: DbOrTrx, id: string, f: SamlAppFields, now: Date) =>
  samlApps.update(db, { id }, { ...toRecord(f), updated_at: now });

export const deleteSamlApp = async (db: DbOrTrx, id: string) => (await samlApps.delete(db, { id })) > 0;

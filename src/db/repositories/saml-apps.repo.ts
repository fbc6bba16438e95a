import type { DbOrTrx } from '..';
import { date, recordWriter, rowMapper, same, type RecordOf, type RowOf } from '../rows';

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
const samlAppColumns = {
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
};

export type SamlAppRow = RowOf<typeof samlAppColumns>;
export type SamlAppFields = Omit<SamlAppRow, 'id' | 'createdAt' | 'updatedAt'>;
export type SamlAppRecord = RecordOf<typeof samlAppColumns>;
const toRow = rowMapper(samlAppColumns);
const writeColumns = recordWriter(samlAppColumns);
/** The jsonb columns are written as JSON text. */
const toRecord = (f: SamlAppFields) => ({
  ...writeColumns(f),
  acs_urls: JSON.stringify(f.acsUrls),
  attributes: JSON.stringify(f.attributes),
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

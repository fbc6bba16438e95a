import { randomUUID } from 'node:crypto';
import { withTransaction } from '../../db';
import { listSamlAppsOfUser } from '../../db/repositories/saml-flows.repo';
import {
  deleteSamlApp,
  findSamlAppById,
  insertSamlApp,
  listSamlApps,
  updateSamlApp,
  type SamlAcsUrl,
  type SamlAppFields,
  type SamlAppRow,
  type SamlAttributeNames,
  type SamlNameIdFormat,
  type SamlSloBinding,
} from '../../db/repositories/saml-apps.repo';
import { badRequest, conflict, found, notFound, type Said } from '../../errors';
import { say } from '../../i18n';
import { isUniqueViolation } from '../../db/pg-errors';
import { outboundRequest, OutboundRefused } from '../../lib/outbound-http';
import { normaliseCertificate } from '../../lib/saml-certificate';
import { SamlInputError } from '../../lib/saml-xml';
import type { ServiceContext } from '../context';
import { upstreamPolicy, upstreamRulesOf } from '../federation/relying-party';
import { DEFAULT_SAML_ATTRIBUTES } from './saml-policy';
import { parseSpMetadata, type SpMetadata } from './sp-metadata';

/** The body of POST and PUT /api/admin/saml-apps (CONTRACT §19), camelCase, already checked field by field. */
export interface SamlAppInput {
  name: string;
  metadataXml?: string;
  metadataUrl?: string;
  entityId?: string;
  acsUrls?: Array<{ url: string; binding: 'HTTP-POST'; index?: number; default?: boolean }>;
  sloUrl?: string | null;
  sloBinding?: SamlSloBinding;
  nameIdFormat?: SamlNameIdFormat;
  attributes?: Partial<SamlAttributeNames>;
  signResponse?: boolean;
  signAssertion?: boolean;
  encryptAssertion?: boolean;
  wantAuthnRequestsSigned?: boolean;
  spCertificate?: string | null;
  spEncryptionCertificate?: string | null;
  enabled?: boolean;
}

const METADATA_MAX_BYTES = 64 * 1024;
const METADATA_TIMEOUT_MS = 5000;

/** An https metadata URL fetched through the outbound-HTTP rules (idp_allow_private / idp_allowed_hosts, no redirects). */
async function fetchMetadata(ctx: ServiceContext, url: string): Promise<string> {
  const refuse = (words: { message: string; said?: Said }) =>
    badRequest('The SP metadata could not be used', [{ path: 'metadata_url', ...words }]);
  let response;
  try {
    response = await outboundRequest(
      url,
      { headers: { accept: 'application/samlmetadata+xml, application/xml, text/xml' } },
      { ...upstreamPolicy(upstreamRulesOf(ctx)), allowHttp: false, maxBytes: METADATA_MAX_BYTES, timeoutMs: METADATA_TIMEOUT_MS },
    );
  } catch (err) {
    if (err instanceof OutboundRefused) {
      ctx.logger.info({ reason: err.reason, detail: err.message }, 'SAML metadata fetch refused');
      // One answer for an internal address and an unknown name: the difference would map the network.
      throw refuse(
        say(
          err.reason === 'scheme'
            ? 'metadataHttps'
            : err.reason === 'refused_address'
              ? 'metadataAddress'
              : err.reason === 'too_large'
                ? 'metadataTooLarge'
                : 'metadataUnreachable',
        ),
      );
    }
    throw err;
  }
  if (response.status !== 200) throw refuse(say('metadataStatus', { status: String(response.status) }));
  return response.body.toString('utf8');
}

/** A certificate as sent (PEM or bare base64), normalised; 400 naming `field` when it is not an RSA ≥ 2048 one. */
function readCertificate(value: string | null, field: 'sp_certificate' | 'sp_encryption_certificate'): string | null {
  if (!value) return null;
  const pem = normaliseCertificate(value);
  if (!pem) {
    throw badRequest(`${field} cannot be read`, [{ path: field, ...say('samlCertificate', { field }) }]);
  }
  return pem;
}

/** The stored fields of an app from the request (and the SP's metadata when given); 400 with details when they do not fit. */
async function resolveFields(ctx: ServiceContext, input: SamlAppInput): Promise<SamlAppFields> {
  let metadata: SpMetadata | undefined;
  const xml = input.metadataXml ?? (input.metadataUrl !== undefined ? await fetchMetadata(ctx, input.metadataUrl) : undefined);
  if (xml !== undefined) {
    try {
      metadata = parseSpMetadata(xml);
    } catch (err) {
      if (err instanceof SamlInputError) {
        throw badRequest('The SP metadata could not be used', [
          {
            path: input.metadataXml !== undefined ? 'metadata_xml' : 'metadata_url',
            message: err.message,
            said: err.said ?? say('samlMetadataXml').said,
          },
        ]);
      }
      throw err;
    }
  }
  const entityId = metadata?.entityId ?? input.entityId;
  const acsInput = metadata?.acsUrls ?? input.acsUrls;
  if (!entityId) throw badRequest('entity_id is required', [{ path: 'entity_id', ...say('samlEntityIdRequired') }]);
  if (!acsInput?.length) throw badRequest('acs_urls is required', [{ path: 'acs_urls', ...say('samlAcsRequired') }]);
  const acsUrls: SamlAcsUrl[] = acsInput.map((a, i) => ({
    url: a.url,
    binding: 'HTTP-POST',
    index: a.index ?? i,
    default: a.default ?? false,
  }));
  if (new Set(acsUrls.map((a) => a.index)).size !== acsUrls.length) {
    throw badRequest('ACS indexes must be unique', [{ path: 'acs_urls', ...say('samlAcsIndexUnique') }]);
  }
  if (acsUrls.filter((a) => a.default).length > 1) {
    throw badRequest('Only one ACS URL can be the default', [{ path: 'acs_urls', ...say('samlAcsOneDefault') }]);
  }
  if (!acsUrls.some((a) => a.default)) acsUrls[0].default = true;

  const spCertificate = readCertificate(metadata ? metadata.spCertificate : (input.spCertificate ?? null), 'sp_certificate');
  const encryptionInput = metadata ? metadata.spEncryptionCertificate : (input.spEncryptionCertificate ?? null);
  const encryptionCertificate = readCertificate(encryptionInput, 'sp_encryption_certificate');
  // Stored only when it is not the signing certificate (null: sp_certificate serves both).
  const spEncryptionCertificate = encryptionCertificate && encryptionCertificate !== spCertificate ? encryptionCertificate : null;
  const wantAuthnRequestsSigned = metadata?.wantAuthnRequestsSigned ?? input.wantAuthnRequestsSigned ?? false;
  if (wantAuthnRequestsSigned && !spCertificate) {
    throw badRequest('Signed requests need the SP certificate', [
      { path: 'want_authn_requests_signed', ...say('samlSignedRequestsCertificate') },
    ]);
  }
  const encryptAssertion = input.encryptAssertion ?? false;
  if (encryptAssertion && !(spEncryptionCertificate ?? spCertificate)) {
    throw badRequest('Encrypted assertions need the SP certificate', [{ path: 'encrypt_assertion', ...say('samlEncryptCertificate') }]);
  }
  const signResponse = input.signResponse ?? true;
  const signAssertion = input.signAssertion ?? true;
  if (!signResponse && !signAssertion) {
    throw badRequest('Something must be signed', [{ path: 'sign_assertion', ...say('samlSignSomething') }]);
  }
  return {
    name: input.name,
    entityId,
    acsUrls,
    sloUrl: metadata ? metadata.sloUrl : (input.sloUrl ?? null),
    sloBinding: metadata ? metadata.sloBinding : (input.sloBinding ?? 'HTTP-Redirect'),
    nameIdFormat: input.nameIdFormat ?? metadata?.nameIdFormat ?? 'emailAddress',
    attributes: { ...DEFAULT_SAML_ATTRIBUTES, ...input.attributes },
    signResponse,
    signAssertion,
    encryptAssertion,
    wantAuthnRequestsSigned,
    spCertificate,
    spEncryptionCertificate,
    enabled: input.enabled ?? true,
  };
}

const taken = () => conflict(say('samlEntityTaken'));

/** The SAML applications a person signed in to (their connected apps, CONTRACT §19), enabled ones only, newest first. */
export async function listSamlAppsOfPerson(
  ctx: ServiceContext,
  userId: string,
): Promise<Array<{ appId: string; name: string; lastSignInAt: Date }>> {
  return listSamlAppsOfUser(ctx.db, userId);
}

export async function listApps(ctx: ServiceContext): Promise<SamlAppRow[]> {
  return listSamlApps(ctx.db);
}

export async function getApp(ctx: ServiceContext, id: string): Promise<SamlAppRow> {
  return found(await findSamlAppById(ctx.db, id), 'SAML application');
}

export async function createApp(ctx: ServiceContext, input: SamlAppInput): Promise<SamlAppRow> {
  const fields = await resolveFields(ctx, input);
  return withTransaction(ctx.db, async (trx) => {
    const app = await insertSamlApp(trx, randomUUID(), fields, ctx.clock.now());
    if (!app) throw taken();
    await ctx.events.record(trx, { type: 'saml.app.created', detail: { app_id: app.id, entity_id: app.entityId } });
    return app;
  });
}

export async function updateApp(ctx: ServiceContext, id: string, input: SamlAppInput): Promise<SamlAppRow> {
  const fields = await resolveFields(ctx, input);
  return withTransaction(ctx.db, async (trx) => {
    let app: SamlAppRow | undefined;
    try {
      app = await updateSamlApp(trx, id, fields, ctx.clock.now());
    } catch (err) {
      if (isUniqueViolation(err)) throw taken();
      throw err;
    }
    if (!app) throw notFound('SAML application');
    await ctx.events.record(trx, { type: 'saml.app.changed', detail: { app_id: app.id, entity_id: app.entityId } });
    return app;
  });
}

export async function removeApp(ctx: ServiceContext, id: string): Promise<void> {
  await withTransaction(ctx.db, async (trx) => {
    if (!(await deleteSamlApp(trx, id))) throw notFound('SAML application');
    await ctx.events.record(trx, { type: 'saml.app.deleted', detail: { app_id: id } });
  });
}

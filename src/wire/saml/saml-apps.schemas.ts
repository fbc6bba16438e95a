import { z } from 'zod';
import { sayIssue, validationKeyOf } from '../../i18n';
import { NAME_ID_FORMATS, samlEndpointProblem } from '../../services/saml/saml-policy';
import type { SamlAppInput } from '../../services/saml/saml-apps.service';
import { nameField, timestampFields, uuidField } from '../common.schemas';

/** CONTRACT §19 request and response bodies of /api/admin/saml-apps. */

export const samlAppIdParams = z.object({ appId: uuidField('appId') });

const endpointField = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .trim()
    .superRefine((v, c) => {
      const problem = samlEndpointProblem(v);
      const key = problem ? validationKeyOf(problem) : undefined;
      if (problem) c.addIssue({ code: 'custom', message: `${field} ${problem}`, ...(key ? { params: { said: { key } } } : {}) });
    });

const attributeName = (field: string) =>
  z
    .string({ error: `attributes.${field} must be a string` })
    .trim()
    .min(1, `attributes.${field} must not be empty`)
    .max(512, `attributes.${field} is too long`)
    .regex(/^[^\x00-\x1f\x7f]+$/, `attributes.${field} must be one line`);

const acsUrlField = z.strictObject({
  url: endpointField('acs_urls[].url'),
  binding: z.literal('HTTP-POST', { error: 'acs_urls[].binding must be HTTP-POST' }).default('HTTP-POST'),
  index: z.number({ error: 'acs_urls[].index must be a number' }).int().min(0).max(65535).optional(),
  default: z.boolean({ error: 'acs_urls[].default must be a boolean' }).optional(),
});

const bool = (field: string) => z.boolean({ error: `${field} must be a boolean` });

export const samlAppBody = z
  .strictObject({
    name: nameField('name'),
    metadata_xml: z
      .string({ error: 'metadata_xml must be a string' })
      .min(1, 'metadata_xml must not be empty')
      .max(64 * 1024, 'metadata_xml is too large')
      .optional(),
    metadata_url: z
      .string({ error: 'metadata_url must be a string' })
      .trim()
      .max(2048, 'metadata_url is too long')
      .pipe(z.url({ protocol: /^https$/, error: 'metadata_url must be an https URL' }))
      .optional(),
    entity_id: z
      .string({ error: 'entity_id must be a string' })
      .trim()
      .min(1, 'entity_id must not be empty')
      .max(1024, 'entity_id is too long')
      .regex(/^[^\s\x00-\x1f\x7f]+$/, 'entity_id must not contain whitespace or control characters')
      .optional(),
    acs_urls: z
      .array(acsUrlField, { error: 'acs_urls must be an array' })
      .min(1, 'acs_urls needs at least one URL')
      .max(20, 'at most 20 ACS URLs')
      .optional(),
    slo_url: endpointField('slo_url').nullable().optional(),
    slo_binding: z.enum(['HTTP-Redirect', 'HTTP-POST'], { error: 'slo_binding must be HTTP-Redirect or HTTP-POST' }).optional(),
    name_id_format: z.enum(NAME_ID_FORMATS, { error: `name_id_format must be one of: ${NAME_ID_FORMATS.join(', ')}` }).optional(),
    attributes: z
      .strictObject({
        email: attributeName('email').optional(),
        given_name: attributeName('given_name').optional(),
        family_name: attributeName('family_name').optional(),
        name: attributeName('name').optional(),
        roles: attributeName('roles').optional(),
      })
      .optional(),
    sign_response: bool('sign_response').optional(),
    sign_assertion: bool('sign_assertion').optional(),
    encrypt_assertion: bool('encrypt_assertion').optional(),
    want_authn_requests_signed: bool('want_authn_requests_signed').optional(),
    sp_certificate: z.string({ error: 'sp_certificate must be a string' }).max(20_000, 'sp_certificate is too long').nullable().optional(),
    sp_encryption_certificate: z
      .string({ error: 'sp_encryption_certificate must be a string' })
      .max(20_000, 'sp_encryption_certificate is too long')
      .nullable()
      .optional(),
    enabled: bool('enabled').optional(),
  })
  .superRefine((b, c) => {
    const fromMetadata = b.metadata_xml !== undefined || b.metadata_url !== undefined;
    if (b.metadata_xml !== undefined && b.metadata_url !== undefined) {
      c.addIssue({ code: 'custom', path: ['metadata_url'], ...sayIssue('samlMetadataOrNot') });
    }
    if (fromMetadata) {
      const fromIt = [
        'entity_id',
        'acs_urls',
        'slo_url',
        'slo_binding',
        'sp_certificate',
        'sp_encryption_certificate',
        'want_authn_requests_signed',
      ] as const;
      for (const field of fromIt) {
        if (b[field] !== undefined) c.addIssue({ code: 'custom', path: [field], ...sayIssue('samlFromMetadata', { field }) });
      }
    } else {
      const required = [
        ['entity_id', 'samlEntityIdRequired'],
        ['acs_urls', 'samlAcsRequired'],
      ] as const;
      for (const [field, key] of required) {
        if (b[field] === undefined) {
          c.addIssue({
            code: 'custom',
            path: [field],
            message: `${field} is required (or metadata_xml / metadata_url)`,
            params: { said: { key } },
          });
        }
      }
    }
  })
  .transform((b): SamlAppInput => ({
    name: b.name,
    metadataXml: b.metadata_xml,
    metadataUrl: b.metadata_url,
    entityId: b.entity_id,
    acsUrls: b.acs_urls,
    sloUrl: b.slo_url,
    sloBinding: b.slo_binding,
    nameIdFormat: b.name_id_format,
    attributes: b.attributes,
    signResponse: b.sign_response,
    signAssertion: b.sign_assertion,
    encryptAssertion: b.encrypt_assertion,
    wantAuthnRequestsSigned: b.want_authn_requests_signed,
    spCertificate: b.sp_certificate,
    spEncryptionCertificate: b.sp_encryption_certificate,
    enabled: b.enabled,
  }));

export const samlAppResponse = z
  .strictObject({
    id: z.string(),
    name: z.string(),
    entity_id: z.string(),
    acs_urls: z.array(z.strictObject({ url: z.string(), binding: z.literal('HTTP-POST'), index: z.number(), default: z.boolean() })),
    slo_url: z.string().nullable(),
    slo_binding: z.enum(['HTTP-Redirect', 'HTTP-POST']),
    name_id_format: z.enum(NAME_ID_FORMATS),
    attributes: z.strictObject({ email: z.string(), given_name: z.string(), family_name: z.string(), name: z.string(), roles: z.string() }),
    sign_response: z.boolean(),
    sign_assertion: z.boolean(),
    encrypt_assertion: z.boolean(),
    want_authn_requests_signed: z.boolean(),
    sp_certificate: z.string().nullable(),
    sp_encryption_certificate: z
      .string()
      .nullable()
      .meta({ description: 'The encryption certificate when it is not sp_certificate (from the metadata, or sent); else null' }),
    enabled: z.boolean(),
    idp_initiated_url: z.string().meta({ description: 'IdP-initiated sign-in (GET, for a signed-in person)' }),
    ...timestampFields,
  })
  .meta({ id: 'SamlApp' });

export const samlAppEnvelope = z.strictObject({ app: samlAppResponse });
export const samlAppsBody = z.strictObject({
  apps: z.array(samlAppResponse),
  idp: z.strictObject({
    entity_id: z.string(),
    metadata_url: z.string(),
    sso_url: z.string(),
    slo_url: z.string(),
    certificates: z.array(z.string()),
  }),
});

export const samlKeyRotatedBody = z.strictObject({
  id: z.string().meta({ description: 'The new current key' }),
  retired: z.array(z.string()).meta({ description: 'Keys retired now (their certificates stay published for 30 days)' }),
  certificates: z.array(z.string()).meta({ description: 'The certificates the metadata now publishes (PEM), the current one first' }),
});

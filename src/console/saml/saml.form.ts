import { z } from 'zod';
import { DEFAULT_SAML_ATTRIBUTES } from '../../declarations/saml';
import { checkbox, formMapping, lines, text, type FieldErrors } from '../action';
import type { SamlApp, SamlAppValues } from './saml.view';

/** The SAML application form (CONTRACT §19): its fields, as the API's body and from its wire shape. */
const appForm = z.object({
  name: text(200),
  metadata_url: text(2100),
  metadata_xml: text(70_000),
  entity_id: text(1100),
  acs_urls: text(45_000),
  slo_url: text(2100),
  slo_binding: text(20),
  name_id_format: text(20),
  sp_certificate: text(20_000),
  sp_encryption_certificate: text(20_000),
  want_authn_requests_signed: checkbox(),
  sign_response: checkbox(),
  sign_assertion: checkbox(),
  encrypt_assertion: checkbox(),
  enabled: checkbox(),
  attr_email: text(600),
  attr_given_name: text(600),
  attr_family_name: text(600),
  attr_name: text(600),
  attr_roles: text(600),
});
type AppForm = z.output<typeof appForm>;

/**
 * ACS URLs, one a line: `URL` or `INDEX URL`; the first line is the default. A line without an index takes its line
 * number, so a plain list works and the indexes an SP's metadata gave survive an edit.
 */
const parseAcs = (text: string) =>
  lines(text).map((line, i) => {
    const m = /^(\d{1,5})\s+(\S.*)$/.exec(line);
    return m?.[1] !== undefined && m[2] !== undefined
      ? { url: m[2], index: Number(m[1]), default: i === 0 }
      : { url: line, index: i, default: i === 0 };
  });

const formatAcs = (app: SamlApp) =>
  [...app.acs_urls]
    .sort((a, b) => Number(b.default) - Number(a.default))
    .map((a) => `${a.index} ${a.url}`)
    .join('\n');

const attributesOf = (f: AppForm) => ({
  email: f.attr_email,
  given_name: f.attr_given_name,
  family_name: f.attr_family_name,
  name: f.attr_name,
  roles: f.attr_roles,
});

/** The form as the API body: from the metadata when a URL or XML is given (the fields it sets are then not sent). */
function asBody(f: AppForm) {
  const flags = {
    name: f.name,
    name_id_format: f.name_id_format || undefined,
    attributes: attributesOf(f),
    sign_response: f.sign_response,
    sign_assertion: f.sign_assertion,
    encrypt_assertion: f.encrypt_assertion,
    enabled: f.enabled,
  };
  if (f.metadata_url.trim()) return { ...flags, metadata_url: f.metadata_url };
  if (f.metadata_xml.trim()) return { ...flags, metadata_xml: f.metadata_xml };
  return {
    ...flags,
    entity_id: f.entity_id,
    acs_urls: parseAcs(f.acs_urls),
    slo_url: f.slo_url.trim() || null,
    slo_binding: f.slo_binding || undefined,
    sp_certificate: f.sp_certificate.trim() || null,
    sp_encryption_certificate: f.sp_encryption_certificate.trim() || null,
    want_authn_requests_signed: f.want_authn_requests_signed,
  };
}
export const appBody = formMapping({ form: appForm, input: asBody, field: 'name' });

export const valuesOf = (a?: SamlApp): SamlAppValues => ({
  name: a?.name ?? '',
  metadata_url: '',
  metadata_xml: '',
  entity_id: a?.entity_id ?? '',
  acs_urls: a ? formatAcs(a) : '',
  slo_url: a?.slo_url ?? '',
  slo_binding: a?.slo_binding ?? 'HTTP-Redirect',
  name_id_format: a?.name_id_format ?? '',
  sp_certificate: a?.sp_certificate ?? '',
  sp_encryption_certificate: a?.sp_encryption_certificate ?? '',
  want_authn_requests_signed: a?.want_authn_requests_signed ?? false,
  sign_response: a?.sign_response ?? true,
  sign_assertion: a?.sign_assertion ?? true,
  encrypt_assertion: a?.encrypt_assertion ?? false,
  enabled: a?.enabled ?? true,
  attr_email: a?.attributes.email ?? DEFAULT_SAML_ATTRIBUTES.email,
  attr_given_name: a?.attributes.given_name ?? DEFAULT_SAML_ATTRIBUTES.given_name,
  attr_family_name: a?.attributes.family_name ?? DEFAULT_SAML_ATTRIBUTES.family_name,
  attr_name: a?.attributes.name ?? DEFAULT_SAML_ATTRIBUTES.name,
  attr_roles: a?.attributes.roles ?? DEFAULT_SAML_ATTRIBUTES.roles,
});

/** The API names `attributes` (and `name_id_format`'s select has no text field): said beside the field it is about. */
export function placed(errors: FieldErrors, f: AppForm): FieldErrors {
  const { attributes, ...out } = errors;
  if (!attributes) return errors;
  const empty = Object.entries(attributesOf(f)).find(([, v]) => !v.trim())?.[0] ?? 'email';
  return { ...out, [`attr_${empty}`]: attributes };
}

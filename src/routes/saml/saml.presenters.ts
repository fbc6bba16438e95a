import type { Config } from '../../config';
import type { SamlAppRow } from '../../db/repositories/saml-apps.repo';

/** A SAML application as the REST API and the console show it (field by field). */
export function presentSamlApp(config: Pick<Config, 'baseUrl'>, app: SamlAppRow) {
  return {
    id: app.id,
    name: app.name,
    entity_id: app.entityId,
    acs_urls: app.acsUrls.map((a) => ({ url: a.url, binding: a.binding, index: a.index, default: a.default })),
    slo_url: app.sloUrl,
    slo_binding: app.sloBinding,
    name_id_format: app.nameIdFormat,
    attributes: { ...app.attributes },
    sign_response: app.signResponse,
    sign_assertion: app.signAssertion,
    encrypt_assertion: app.encryptAssertion,
    want_authn_requests_signed: app.wantAuthnRequestsSigned,
    sp_certificate: app.spCertificate,
    sp_encryption_certificate: app.spEncryptionCertificate,
    enabled: app.enabled,
    idp_initiated_url: `${config.baseUrl}/saml/sso?app=${app.id}`,
    created_at: app.createdAt.toISOString(),
    updated_at: app.updatedAt.toISOString(),
  };
}

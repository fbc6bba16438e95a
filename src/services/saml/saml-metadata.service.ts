import { certificateBody } from '../../lib/saml-certificate';
import { BINDING, el, newDocument, NS, serialize } from '../../lib/saml-xml';
import type { ServiceContext } from '../context';
import { publishedSamlCertificates, samlEntityId } from './saml-keys.service';
import { NAME_ID_FORMAT_URN, NAME_ID_FORMATS } from './saml-policy';

/** Where SPs reach this IdP (CONTRACT §19): the entity id is the metadata URL, under OIDC_ISSUER. */
export function idpEndpoints(ctx: ServiceContext) {
  return {
    entity_id: samlEntityId(ctx),
    metadata_url: `${ctx.config.oidcIssuer}/saml/metadata`,
    sso_url: `${ctx.config.baseUrl}/saml/sso`,
    slo_url: `${ctx.config.baseUrl}/saml/slo`,
  };
}

/** The IdP as the REST API and the console show it: endpoints and the published certificates (PEM). */
export async function idpDescription(ctx: ServiceContext) {
  return { ...idpEndpoints(ctx), certificates: await publishedSamlCertificates(ctx) };
}

/** GET /saml/metadata: an md:EntityDescriptor with every published signing certificate. */
export async function idpMetadataXml(ctx: ServiceContext): Promise<string> {
  const endpoints = idpEndpoints(ctx);
  const certificates = await publishedSamlCertificates(ctx);
  const doc = newDocument();
  const md = (name: string, attrs: Record<string, string | undefined> = {}, children: Parameters<typeof el>[4] = []) =>
    el(doc, NS.metadata, `md:${name}`, attrs, children);
  const root = md('EntityDescriptor', { entityID: endpoints.entity_id }, [
    md('IDPSSODescriptor', { WantAuthnRequestsSigned: 'false', protocolSupportEnumeration: NS.protocol }, [
      ...certificates.map((pem) =>
        md('KeyDescriptor', { use: 'signing' }, [
          el(doc, NS.dsig, 'ds:KeyInfo', {}, [
            el(doc, NS.dsig, 'ds:X509Data', {}, [el(doc, NS.dsig, 'ds:X509Certificate', {}, [certificateBody(pem)])]),
          ]),
        ]),
      ),
      md('SingleLogoutService', { Binding: BINDING.redirect, Location: endpoints.slo_url }),
      md('SingleLogoutService', { Binding: BINDING.post, Location: endpoints.slo_url }),
      ...NAME_ID_FORMATS.map((f) => md('NameIDFormat', {}, [NAME_ID_FORMAT_URN[f]])),
      md('SingleSignOnService', { Binding: BINDING.redirect, Location: endpoints.sso_url }),
      md('SingleSignOnService', { Binding: BINDING.post, Location: endpoints.sso_url }),
    ]),
  ]);
  return `<?xml version="1.0" encoding="UTF-8"?>\n${serialize(root)}`;
}

import type { SamlAcsUrl, SamlSloBinding } from '../../db/repositories/saml-apps.repo';
import { normaliseCertificate } from '../../lib/saml-certificate';
import { attr, BINDING, childrenNS, NS, parseSamlXml, SamlInputError, textOf } from '../../lib/saml-xml';
import { NAME_ID_FORMAT_URN, NAME_ID_FORMATS, samlEndpointProblem } from './saml-policy';
import type { SamlNameIdFormat } from '../../db/repositories/saml-apps.repo';
import { say, type ValidationKey, type ValidationParams } from '../../i18n';

/** A refusal of the SP metadata with its catalogue key (the console says it in the page's language). */
const refused = (key: ValidationKey, params?: ValidationParams) => {
  const { message, said } = say(key, params);
  return new SamlInputError(message, said);
};

/** What an SP's metadata says about it (CONTRACT §19: entity id, ACS URLs, SLO URL, certificate, AuthnRequestsSigned). */
export interface SpMetadata {
  entityId: string;
  acsUrls: SamlAcsUrl[];
  sloUrl: string | null;
  sloBinding: SamlSloBinding;
  spCertificate: string | null;
  /** The encryption certificate when it is not the signing one (KeyDescriptor use="encryption"). */
  spEncryptionCertificate: string | null;
  wantAuthnRequestsSigned: boolean;
  nameIdFormat?: SamlNameIdFormat;
}

/** Reads an EntityDescriptor with one SPSSODescriptor; throws SamlInputError with the reason. */
export function parseSpMetadata(xml: string): SpMetadata {
  const root = parseSamlXml(xml).documentElement;
  if (root.namespaceURI !== NS.metadata || root.localName !== 'EntityDescriptor') {
    throw refused('samlMetadataRoot');
  }
  const entityId = attr(root, 'entityID')?.trim();
  if (!entityId || entityId.length > 1024) throw refused('samlMetadataEntityId');
  const sps = childrenNS(root, NS.metadata, 'SPSSODescriptor');
  if (sps.length !== 1) throw refused('samlMetadataOneSp');
  const sp = sps[0];

  const acsUrls: SamlAcsUrl[] = [];
  for (const acs of childrenNS(sp, NS.metadata, 'AssertionConsumerService')) {
    if (attr(acs, 'Binding') !== BINDING.post) continue;
    const url = attr(acs, 'Location') ?? '';
    const problem = samlEndpointProblem(url);
    if (problem) throw refused('samlMetadataAcsLocation', { problem });
    const index = Number(attr(acs, 'index') ?? acsUrls.length);
    if (!Number.isInteger(index) || index < 0 || index > 65535) throw refused('samlMetadataAcsIndex');
    acsUrls.push({ url, binding: 'HTTP-POST', index, default: attr(acs, 'isDefault') === 'true' });
  }
  if (acsUrls.length === 0) throw refused('samlMetadataNoAcs');
  if (acsUrls.length > 20) throw refused('samlMetadataTooManyAcs');
  if (!acsUrls.some((a) => a.default)) acsUrls[0].default = true;
  for (const a of acsUrls.filter((x) => x.default).slice(1)) a.default = false;

  let sloUrl: string | null = null;
  let sloBinding: SamlSloBinding = 'HTTP-Redirect';
  const slos = childrenNS(sp, NS.metadata, 'SingleLogoutService');
  const slo = slos.find((s) => attr(s, 'Binding') === BINDING.redirect) ?? slos.find((s) => attr(s, 'Binding') === BINDING.post);
  if (slo) {
    sloUrl = attr(slo, 'Location') ?? '';
    const problem = samlEndpointProblem(sloUrl);
    if (problem) throw refused('samlMetadataSloLocation', { problem });
    sloBinding = attr(slo, 'Binding') === BINDING.post ? 'HTTP-POST' : 'HTTP-Redirect';
  }

  const spCertificate = certificateOf(sp, 'signing');
  const encryption = certificateOf(sp, 'encryption');
  const spEncryptionCertificate = encryption && encryption !== spCertificate ? encryption : null;
  const wantAuthnRequestsSigned = attr(sp, 'AuthnRequestsSigned') === 'true';
  if (wantAuthnRequestsSigned && !spCertificate) throw refused('samlMetadataSignedNoCertificate');

  const formats = childrenNS(sp, NS.metadata, 'NameIDFormat').map((n) => textOf(n));
  const nameIdFormat = NAME_ID_FORMATS.find((f) => formats[0] === NAME_ID_FORMAT_URN[f]);
  return { entityId, acsUrls, sloUrl, sloBinding, spCertificate, spEncryptionCertificate, wantAuthnRequestsSigned, nameIdFormat };
}

/** The first certificate of a KeyDescriptor for `use` (or for any use, without the attribute); RSA of 2048 bits or more. */
function certificateOf(sp: Element, use: 'signing' | 'encryption'): string | null {
  for (const kd of childrenNS(sp, NS.metadata, 'KeyDescriptor')) {
    const declared = attr(kd, 'use');
    if (declared !== undefined && declared !== use) continue;
    const certs = kd.getElementsByTagNameNS(NS.dsig, 'X509Certificate');
    const body = certs.length > 0 ? textOf(certs[0]) : undefined;
    if (!body) continue;
    const pem = normaliseCertificate(body);
    if (!pem) throw refused('samlMetadataCertificate', { use });
    return pem;
  }
  return null;
}

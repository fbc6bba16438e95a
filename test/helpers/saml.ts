import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { DOMParser } from '@xmldom/xmldom';
import { SignedXml } from 'xml-crypto';
import { createSelfSignedCertificate } from '../../src/lib/saml-certificate';
import { deflateForRedirect, signElement, signedRedirectQuery } from '../../src/lib/saml-xml';
import type { TestApp } from './test-app';

/** A test service provider: its entity id, ACS and SLO URLs and (for signed requests) a key pair. */
export interface TestSp {
  entityId: string;
  acsUrl: string;
  sloUrl: string;
  key: { privateKeyPem: string; certificatePem: string };
}

let n = 0;
export function makeTestSp(): TestSp {
  const i = ++n;
  return {
    entityId: `https://sp${i}.test/metadata`,
    acsUrl: `https://sp${i}.test/acs`,
    sloUrl: `https://sp${i}.test/slo`,
    key: createSelfSignedCertificate(`sp${i}`, new Date()),
  };
}

export const samlId = () => `_${randomBytes(16).toString('hex')}`;

export function authnRequestXml(
  t: TestApp,
  sp: TestSp,
  o: {
    id?: string;
    acsUrl?: string | null;
    acsIndex?: number;
    forceAuthn?: boolean;
    isPassive?: boolean;
    issueInstant?: Date;
    destination?: string;
    issuer?: string;
  } = {},
): { id: string; xml: string } {
  const id = o.id ?? samlId();
  const attrs = [
    `ID="${id}"`,
    'Version="2.0"',
    `IssueInstant="${(o.issueInstant ?? t.clock.now()).toISOString()}"`,
    `Destination="${o.destination ?? `${t.config.baseUrl}/saml/sso`}"`,
    o.acsUrl === null
      ? ''
      : o.acsIndex !== undefined
        ? `AssertionConsumerServiceIndex="${o.acsIndex}"`
        : `AssertionConsumerServiceURL="${o.acsUrl ?? sp.acsUrl}"`,
    'ProtocolBinding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"',
    o.forceAuthn ? 'ForceAuthn="true"' : '',
    o.isPassive ? 'IsPassive="true"' : '',
  ].filter(Boolean);
  const xml =
    `<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ${attrs.join(' ')}>` +
    `<saml:Issuer>${o.issuer ?? sp.entityId}</saml:Issuer>` +
    '<samlp:NameIDPolicy Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress" AllowCreate="true"/>' +
    '</samlp:AuthnRequest>';
  return { id, xml };
}

export function logoutRequestXml(t: TestApp, sp: TestSp, nameId: string, sessionIndex: string | undefined, id = samlId()): string {
  return (
    `<samlp:LogoutRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${id}" Version="2.0" ` +
    `IssueInstant="${t.clock.now().toISOString()}" Destination="${t.config.baseUrl}/saml/slo">` +
    `<saml:Issuer>${sp.entityId}</saml:Issuer><saml:NameID>${nameId}</saml:NameID>` +
    (sessionIndex ? `<samlp:SessionIndex>${sessionIndex}</samlp:SessionIndex>` : '') +
    '</samlp:LogoutRequest>'
  );
}

/** Redirect binding query (optionally signed with the SP's key). */
export function redirectQuery(xml: string, relayState?: string, key?: TestSp['key']): string {
  if (key) return signedRedirectQuery('SAMLRequest', xml, relayState, key.privateKeyPem);
  return `SAMLRequest=${encodeURIComponent(deflateForRedirect(xml))}${relayState !== undefined ? `&RelayState=${encodeURIComponent(relayState)}` : ''}`;
}

/** An enveloped signature on the root of a request (POST binding). */
export function signRequest(xml: string, localName: 'AuthnRequest' | 'LogoutRequest', id: string, key: TestSp['key']): string {
  return signElement(xml, 'urn:oasis:names:tc:SAML:2.0:protocol', localName, id, key);
}

/** The auto-POST form of a page: where it posts and what. */
export function readPostForm(html: string): { action: string; field: string; message: string; relayState?: string } {
  const unescape = (s: string) =>
    s
      .replace(/&quot;/g, '"')
      .replace(/&#x27;|&#39;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&');
  const action = /<form method="post" action="([^"]*)"/.exec(html)?.[1];
  const field = /<input type="hidden" name="(SAMLResponse|SAMLRequest)" value="([^"]*)"/.exec(html);
  const relay = /<input type="hidden" name="RelayState" value="([^"]*)"/.exec(html);
  if (!action || !field) throw new Error(`no SAML form in page: ${html.slice(0, 500)}`);
  return { action: unescape(action), field: field[1]!, message: unescape(field[2]!), relayState: relay ? unescape(relay[1]!) : undefined };
}

export function decodeResponse(message: string): { xml: string; doc: Document } {
  const xml = Buffer.from(message, 'base64').toString('utf8');
  return { xml, doc: new DOMParser().parseFromString(xml, 'text/xml') };
}

/** Checks the enveloped signature of the element with this ID against the IdP's certificate (independently of the IdP code). */
export function signatureValid(xml: string, signatureParent: Element, certificatePem: string): boolean {
  const sig = Array.from(signatureParent.childNodes).find((c) => c.nodeType === 1 && (c as Element).localName === 'Signature') as
    Element | undefined;
  if (!sig) return false;
  const v = new SignedXml({ publicCert: certificatePem, getCertFromKeyInfo: () => null });
  v.loadSignature(sig);
  try {
    return v.checkSignature(xml);
  } catch {
    return false;
  }
}

/** Creates an app through the REST API; returns its presented body. */
export async function createSamlApp(t: TestApp, bearer: string, sp: TestSp, body: Record<string, unknown> = {}) {
  const res = await request(t.app)
    .post('/api/admin/saml-apps')
    .set('Authorization', bearer)
    .send({ name: 'Test SP', entity_id: sp.entityId, acs_urls: [{ url: sp.acsUrl }], slo_url: sp.sloUrl, ...body });
  if (res.status !== 201) throw new Error(`create SAML app: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.app as { id: string; entity_id: string };
}

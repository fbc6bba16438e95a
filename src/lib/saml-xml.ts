import { createPublicKey, createVerify, sign as rsaSign, X509Certificate, type KeyObject } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { Said } from '../errors';

/**
 * The XML stack (xmldom, xml-crypto, xml-encryption) is loaded on the first SAML message or metadata document, outside
 * the server's bundle (scripts/bundle.js), not at start: most processes never speak SAML.
 */
const xmldom = (): typeof import('@xmldom/xmldom') => require('@xmldom/xmldom');
const xmlCrypto = (): typeof import('xml-crypto') => require('xml-crypto');
const xmlEncryption = (): typeof import('xml-encryption') => require('xml-encryption');

/**
 * The XML side of the SAML identity provider (CONTRACT §19), narrow by construction:
 * - one parser configuration (`parseSamlXml`): a document with a DTD, an entity declaration or reference other than
 *   the five predefined ones, a processing instruction other than the XML declaration, more than one root element,
 *   or any parser error or warning is refused before anything reads it;
 * - signatures are made and checked by xml-crypto (exclusive c14n without comments, RSA-SHA256, SHA-256 digests) and
 *   only in one position: the signature is a direct child of the root element, it has exactly one reference, that
 *   reference is the root's ID, and the caller reads the message from the bytes xml-crypto verified
 *   (`getSignedReferences()`), never from the document that was sent (no signature wrapping);
 * - what the IdP writes is built as a DOM (`el`) and serialised, so a user's name or an SP's URL can never break out
 *   of its text node or attribute.
 */

export const NS = {
  protocol: 'urn:oasis:names:tc:SAML:2.0:protocol',
  assertion: 'urn:oasis:names:tc:SAML:2.0:assertion',
  metadata: 'urn:oasis:names:tc:SAML:2.0:metadata',
  dsig: 'http://www.w3.org/2000/09/xmldsig#',
  xsi: 'http://www.w3.org/2001/XMLSchema-instance',
  xs: 'http://www.w3.org/2001/XMLSchema',
} as const;

export const ALG = {
  rsaSha256: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
  sha256: 'http://www.w3.org/2001/04/xmlenc#sha256',
  excC14n: 'http://www.w3.org/2001/10/xml-exc-c14n#',
  enveloped: 'http://www.w3.org/2000/09/xmldsig#enveloped-signature',
} as const;

/**
 * Assertion encryption (xml-encryption 6): the content in AES-256-GCM (authenticated; the CBC modes are refused by the
 * library's default), its key transported in RSA-OAEP with MGF1 (`rsa-oaep-mgf1p`, SHA-1 as the OAEP digest: the
 * identifier every SP stack decrypts, xmlsec1 1.2 and xmlseclibs among them; OAEP's security does not rest on the
 * digest's collision resistance).
 */
export const ENCRYPTION = {
  content: 'http://www.w3.org/2009/xmlenc11#aes256-gcm',
  key: 'http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p',
} as const;

export const BINDING = {
  redirect: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect',
  post: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST',
} as const;

/** A message this IdP refuses to read: the reason is shown on the error page and recorded in the audit event. */
export class SamlInputError extends Error {
  override name = 'SamlInputError';
  /** The catalogue key of `message` (src/i18n `say`), for a console form in the page's language. */
  constructor(
    message: string,
    readonly said?: Said,
  ) {
    super(message);
  }
}

/** The largest message accepted, before and after inflating (a deflate bomb stops here). */
export const MAX_SAML_MESSAGE_BYTES = 64 * 1024;

const ENTITY_NOT_PREDEFINED = /&(?!(?:lt|gt|amp|quot|apos|#[0-9]{1,7}|#x[0-9a-fA-F]{1,6});)/;

/** The one parser configuration: anything but a plain, single-rooted, DTD-free document is refused. */
export function parseSamlXml(xml: string): Document {
  if (xml.length > MAX_SAML_MESSAGE_BYTES) throw new SamlInputError('the message is too large');
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) throw new SamlInputError('the message contains a document type declaration');
  if (ENTITY_NOT_PREDEFINED.test(xml)) throw new SamlInputError('the message contains an entity reference');
  if (xml.replace(/^\uFEFF?\s*<\?xml\s[^<>?]*\?>/, '').includes('<?')) {
    throw new SamlInputError('the message contains a processing instruction');
  }
  const problems: string[] = [];
  const report = (msg: string) => problems.push(msg);
  const doc = new (xmldom().DOMParser)({ errorHandler: { warning: report, error: report, fatalError: report } }).parseFromString(
    xml,
    'text/xml',
  );
  if (problems.length > 0 || !doc?.documentElement) throw new SamlInputError('the message is not well-formed XML');
  let roots = 0;
  for (let n = doc.firstChild; n; n = n.nextSibling) {
    if (n.nodeType === 1) roots++;
    else if (n.nodeType === 10) throw new SamlInputError('the message contains a document type declaration');
  }
  if (roots !== 1) throw new SamlInputError('the message must have exactly one root element');
  return doc;
}

function isElement(n: Node): n is Element {
  return n.nodeType === 1;
}

/** Element children of `parent` with this namespace and local name. */
export function childrenNS(parent: Element, ns: string, localName: string): Element[] {
  const out: Element[] = [];
  for (let n = parent.firstChild; n; n = n.nextSibling) {
    if (isElement(n) && n.namespaceURI === ns && n.localName === localName) out.push(n);
  }
  return out;
}

/** The one child of that name, undefined when absent; more than one is refused. */
export function onlyChild(parent: Element, ns: string, localName: string): Element | undefined {
  const found = childrenNS(parent, ns, localName);
  if (found.length > 1) throw new SamlInputError(`more than one ${localName}`);
  return found[0];
}

/** Text content of an element, trimmed. */
export function textOf(el: Element | undefined): string | undefined {
  const text = el?.textContent?.trim();
  return text ? text : undefined;
}

export function attr(el: Element, name: string): string | undefined {
  // xmldom answers '' for a missing attribute: hasAttribute tells the two apart.
  return (el.hasAttribute(name) ? el.getAttribute(name) : null) ?? undefined;
}

// ---------------------------------------------------------------------------------------------------------------------
// Building what the IdP writes.

const XMLNS = 'http://www.w3.org/2000/xmlns/';

export type XmlChild = Element | string | undefined | false | null;

/** The document the IdP builds a message in; `el` creates its elements. */
export function newDocument(): Document {
  return new (xmldom().DOMParser)().parseFromString('<x/>', 'text/xml');
}

/** An element `prefix:local` in `ns`, with attributes (undefined ones left out) and children (text is escaped). */
export function el(
  doc: Document,
  ns: string,
  qualifiedName: string,
  attrs: Record<string, string | undefined> = {},
  children: XmlChild[] = [],
): Element {
  const node = doc.createElementNS(ns, qualifiedName);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined) continue;
    // Namespace declarations and xsi: attributes are namespaced attributes, so the serializer declares each once.
    if (name.startsWith('xmlns:')) node.setAttributeNS(XMLNS, name, value);
    else if (name.startsWith('xsi:')) node.setAttributeNS(NS.xsi, name, value);
    else node.setAttribute(name, value);
  }
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    node.appendChild(typeof child === 'string' ? doc.createTextNode(child) : child);
  }
  return node;
}

export function serialize(node: Node): string {
  return new (xmldom().XMLSerializer)().serializeToString(node);
}

// ---------------------------------------------------------------------------------------------------------------------
// Enveloped signatures.

export interface SigningMaterial {
  privateKeyPem: string;
  certificatePem: string;
}

/**
 * Signs the element `localName` (namespace `ns`) whose ID is `id` inside `xml` with an enveloped signature placed
 * right after its <Issuer> (the position the SAML schema gives it), exclusive c14n, RSA-SHA256, SHA-256.
 */
export function signElement(xml: string, ns: string, localName: string, id: string, key: SigningMaterial): string {
  const sig = new (xmlCrypto().SignedXml)({
    privateKey: key.privateKeyPem,
    publicCert: key.certificatePem,
    signatureAlgorithm: ALG.rsaSha256,
    canonicalizationAlgorithm: ALG.excC14n,
  });
  const target = `//*[namespace-uri()='${ns}' and local-name()='${localName}' and @ID='${id}']`;
  sig.addReference({ xpath: target, transforms: [ALG.enveloped, ALG.excC14n], digestAlgorithm: ALG.sha256 });
  sig.computeSignature(xml, {
    prefix: 'ds',
    location: { reference: `${target}/*[namespace-uri()='${NS.assertion}' and local-name()='Issuer']`, action: 'after' },
  });
  return sig.getSignedXml();
}

/** `xml` (a signed assertion) as an xenc:EncryptedData to the SP's certificate, whose KeyInfo names that certificate. */
export function encryptToCertificate(xml: string, certificatePem: string): Promise<string> {
  const publicKey = publicKeyOf(certificatePem).export({ type: 'spki', format: 'pem' });
  return new Promise((resolve, reject) =>
    xmlEncryption().encrypt(
      xml,
      {
        rsa_pub: publicKey,
        pem: certificatePem,
        encryptionAlgorithm: ENCRYPTION.content,
        keyEncryptionAlgorithm: ENCRYPTION.key,
        keyEncryptionDigest: 'sha1',
        disallowEncryptionWithInsecureAlgorithm: true,
        warnInsecureAlgorithm: false,
      },
      (err, result) => (err || !result ? reject(err ?? new Error('xml-encryption returned nothing')) : resolve(result)),
    ),
  );
}

/** The certificate's public key, or undefined when the PEM does not read. */
function publicKeyOf(certificatePem: string): KeyObject {
  return createPublicKey(new X509Certificate(certificatePem).toString());
}

/**
 * Checks the enveloped signature of a received message (a POST-binding AuthnRequest or LogoutRequest) with the SP's
 * registered certificate and returns the message as signed: the canonical bytes xml-crypto verified, parsed again.
 * Refused: no signature; a signature anywhere but as a direct child of the root; more than one; anything but one
 * reference to the root's own ID; any algorithm but exclusive c14n / RSA-SHA256 / SHA-256.
 */
export function verifySignedRoot(xml: string, doc: Document, certificatePem: string): Element {
  const root = doc.documentElement;
  const all = doc.getElementsByTagNameNS(NS.dsig, 'Signature');
  const direct = childrenNS(root, NS.dsig, 'Signature');
  if (all.length === 0) throw new SamlInputError('the message is not signed');
  if (all.length !== 1 || direct.length !== 1) throw new SamlInputError('the message must carry exactly one signature, on its root');
  const signature = direct[0];
  const id = attr(root, 'ID');
  if (!id) throw new SamlInputError('the signed message has no ID');
  const signedInfo = onlyChild(signature, NS.dsig, 'SignedInfo');
  if (!signedInfo) throw new SamlInputError('the signature has no SignedInfo');
  const algorithmOf = (parent: Element, name: string) => {
    const node = onlyChild(parent, NS.dsig, name);
    return node ? attr(node, 'Algorithm') : undefined;
  };
  if (algorithmOf(signedInfo, 'CanonicalizationMethod') !== ALG.excC14n) {
    throw new SamlInputError('the signature must use exclusive canonicalisation without comments');
  }
  if (algorithmOf(signedInfo, 'SignatureMethod') !== ALG.rsaSha256) throw new SamlInputError('the signature must use RSA-SHA256');
  const references = childrenNS(signedInfo, NS.dsig, 'Reference');
  if (references.length !== 1) throw new SamlInputError('the signature must have exactly one reference');
  const reference = references[0];
  if (attr(reference, 'URI') !== `#${id}`) throw new SamlInputError('the signature does not cover the message');
  if (algorithmOf(reference, 'DigestMethod') !== ALG.sha256) throw new SamlInputError('the signature must use SHA-256 digests');
  const transforms = onlyChild(reference, NS.dsig, 'Transforms');
  for (const t of transforms ? childrenNS(transforms, NS.dsig, 'Transform') : []) {
    const alg = attr(t, 'Algorithm');
    if (alg !== ALG.enveloped && alg !== ALG.excC14n) throw new SamlInputError('the signature uses a transform that is not allowed');
  }
  let publicCert: KeyObject;
  try {
    publicCert = publicKeyOf(certificatePem);
  } catch {
    throw new SamlInputError('the registered certificate cannot be read');
  }
  // The key is the registered certificate's, never one from the message's KeyInfo.
  const verifier = new (xmlCrypto().SignedXml)({ publicCert, getCertFromKeyInfo: () => null });
  let valid: boolean;
  try {
    verifier.loadSignature(signature);
    valid = verifier.checkSignature(xml);
  } catch {
    valid = false;
  }
  const signed = valid ? verifier.getSignedReferences() : [];
  if (!valid || signed.length !== 1) throw new SamlInputError('the signature is not valid');
  const signedRoot = parseSamlXml(signed[0]).documentElement;
  if (signedRoot.namespaceURI !== root.namespaceURI || signedRoot.localName !== root.localName || attr(signedRoot, 'ID') !== id) {
    throw new SamlInputError('the signature does not cover the message');
  }
  return signedRoot;
}

// ---------------------------------------------------------------------------------------------------------------------
// HTTP-Redirect binding (SAML Bindings §3.4): DEFLATE, base64, and a signature over the query string.

export function deflateForRedirect(xml: string): string {
  return deflateRawSync(Buffer.from(xml, 'utf8')).toString('base64');
}

export function inflateFromRedirect(value: string): string {
  const raw = decodeBase64(value);
  try {
    return inflateRawSync(raw, { maxOutputLength: MAX_SAML_MESSAGE_BYTES }).toString('utf8');
  } catch {
    throw new SamlInputError('the message is not DEFLATE-compressed or is too large');
  }
}

export function decodeBase64(value: string): Buffer {
  const compact = value.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length === 0) throw new SamlInputError('the message is not base64');
  const buf = Buffer.from(compact, 'base64');
  if (buf.length > MAX_SAML_MESSAGE_BYTES) throw new SamlInputError('the message is too large');
  return buf;
}

/**
 * The raw (still URL-encoded) value of a query parameter as sent: the signature of the Redirect binding covers the
 * bytes the sender produced, not a re-encoding of them. Undefined when absent; a parameter sent twice is refused.
 */
export function rawQueryParameter(rawQuery: string, name: string): string | undefined {
  const found = rawQuery
    .replace(/^\?/, '')
    .split('&')
    .filter((p) => p.split('=')[0] === name);
  if (found.length > 1) throw new SamlInputError(`${name} is sent more than once`);
  return found[0] === undefined ? undefined : found[0].slice(name.length + 1);
}

/** Checks the Redirect binding's query signature with the SP's certificate (RSA-SHA256 only). */
export function verifyRedirectSignature(rawQuery: string, messageParam: 'SAMLRequest' | 'SAMLResponse', certificatePem: string): void {
  const message = rawQueryParameter(rawQuery, messageParam);
  const relayState = rawQueryParameter(rawQuery, 'RelayState');
  const sigAlg = rawQueryParameter(rawQuery, 'SigAlg');
  const signature = rawQueryParameter(rawQuery, 'Signature');
  if (!signature || !sigAlg) throw new SamlInputError('the message is not signed');
  if (safeDecode(sigAlg) !== ALG.rsaSha256) throw new SamlInputError('the signature must use RSA-SHA256');
  const signedPart = [
    `${messageParam}=${message ?? ''}`,
    ...(relayState !== undefined ? [`RelayState=${relayState}`] : []),
    `SigAlg=${sigAlg}`,
  ].join('&');
  let valid: boolean;
  try {
    valid = createVerify('RSA-SHA256')
      .update(signedPart)
      .verify(publicKeyOf(certificatePem), decodeBase64(safeDecode(signature)));
  } catch {
    valid = false;
  }
  if (!valid) throw new SamlInputError('the signature is not valid');
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    throw new SamlInputError('the query is not valid URL encoding');
  }
}

/** The query string of a signed Redirect-binding message from the IdP (SAMLResponse for a LogoutResponse). */
export function signedRedirectQuery(
  messageParam: 'SAMLRequest' | 'SAMLResponse',
  xml: string,
  relayState: string | undefined,
  privateKeyPem: string,
): string {
  const parts = [`${messageParam}=${formEncode(deflateForRedirect(xml))}`];
  if (relayState !== undefined) parts.push(`RelayState=${formEncode(relayState)}`);
  parts.push(`SigAlg=${formEncode(ALG.rsaSha256)}`);
  const signature = rsaSign('sha256', Buffer.from(parts.join('&')), privateKeyPem).toString('base64');
  return `${parts.join('&')}&Signature=${formEncode(signature)}`;
}

/**
 * application/x-www-form-urlencoded as most SAML stacks re-encode before checking a Redirect signature (everything
 * but A-Z a-z 0-9 - . _ ~ escaped, space as +): the signed bytes then survive an SP that re-encodes what it received.
 */
function formEncode(value: string): string {
  return encodeURIComponent(value)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}

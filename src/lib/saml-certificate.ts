import { createPublicKey, generateKeyPairSync, randomBytes, sign, X509Certificate } from 'node:crypto';
import { AsnConvert } from '@peculiar/asn1-schema';
import {
  AlgorithmIdentifier,
  AttributeTypeAndValue,
  AttributeValue,
  Certificate,
  Name,
  RelativeDistinguishedName,
  SubjectPublicKeyInfo,
  TBSCertificate,
  Validity,
  Version,
} from '@peculiar/asn1-x509';

/** sha256WithRSAEncryption (RFC 4055), parameters NULL. */
const SHA256_WITH_RSA = '1.2.840.113549.1.1.11';
const COMMON_NAME = '2.5.4.3';
const DER_NULL = new Uint8Array([0x05, 0x00]).buffer;

export const SAML_CERTIFICATE_YEARS = 10;

/**
 * CONTRACT §19: the IdP's RSA-2048 signing key and a self-signed certificate for it (10 years). SAML uses the
 * certificate only as a container for the public key (SPs pin it from the metadata), so it carries no extensions.
 * The structures are @peculiar/asn1-x509's (the X.509 ASN.1 schema); the signature is Node's.
 */
export function createSelfSignedCertificate(commonName: string, now: Date): { privateKeyPem: string; certificatePem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent: 0x10001 });
  const name = new Name([
    new RelativeDistinguishedName([
      new AttributeTypeAndValue({ type: COMMON_NAME, value: new AttributeValue({ utf8String: commonName.slice(0, 64) }) }),
    ]),
  ]);
  const serial = randomBytes(16);
  // A positive INTEGER whose first byte is never 0: a leading 0x00 before a byte below 0x80 is illegal DER padding, which
  // Node refuses ("illegal padding") and which failed a server's start about once in 256.
  serial[0] = (serial[0] & 0x7f) | 0x40;
  const algorithm = new AlgorithmIdentifier({ algorithm: SHA256_WITH_RSA, parameters: DER_NULL });
  const notAfter = new Date(now);
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + SAML_CERTIFICATE_YEARS);
  const tbs = new TBSCertificate({
    version: Version.v3,
    serialNumber: new Uint8Array(serial).buffer,
    signature: algorithm,
    issuer: name,
    subject: name,
    validity: new Validity({ notBefore: new Date(now.getTime() - 60_000), notAfter }),
    subjectPublicKeyInfo: AsnConvert.parse(publicKey.export({ type: 'spki', format: 'der' }), SubjectPublicKeyInfo),
  });
  const tbsDer = Buffer.from(AsnConvert.serialize(tbs));
  const signature = sign('sha256', tbsDer, privateKey);
  const certificate = new Certificate({
    tbsCertificate: tbs,
    signatureAlgorithm: algorithm,
    signatureValue: new Uint8Array(signature).buffer,
  });
  const der = Buffer.from(AsnConvert.serialize(certificate));
  const certificatePem = `-----BEGIN CERTIFICATE-----\n${der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`;
  // Proof that what we built is a certificate Node reads and that it verifies with its own key.
  const parsed = new X509Certificate(certificatePem);
  if (!parsed.verify(createPublicKey(privateKey))) throw new Error('self-signed certificate does not verify');
  return { privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), certificatePem };
}

/** The base64 body of a PEM certificate (what <ds:X509Certificate> holds). */
export function certificateBody(pem: string): string {
  return pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
}

/**
 * A certificate given by an admin or an SP's metadata (PEM, or the bare base64 of <ds:X509Certificate>), normalised
 * to PEM; undefined when Node cannot read it or its key is not RSA of at least 2048 bits.
 */
export function normaliseCertificate(input: string): string | undefined {
  const body = certificateBody(input.trim());
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(body) || body.length > 20_000) return undefined;
  const pem = `-----BEGIN CERTIFICATE-----\n${body.replace(/.{64}/g, '$&\n').replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`;
  try {
    const cert = new X509Certificate(pem);
    const key = cert.publicKey;
    if (key.asymmetricKeyType !== 'rsa' || (key.asymmetricKeyDetails?.modulusLength ?? 0) < 2048) return undefined;
    return pem;
  } catch {
    return undefined;
  }
}

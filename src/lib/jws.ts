import { constants, KeyObject, verify } from 'node:crypto';

/**
 * Compact JWS (RFC 7515) checked synchronously with node:crypto, for the signatures a client presents on every request
 * (DPoP proofs and private_key_jwt assertions, issue 34). jose verifies through a promise and the libuv thread pool,
 * which cost about as much again as the check itself (docs/performance.md); jose still imports the keys and chooses
 * them from a key set.
 */

/** The signature algorithms of client-presented JWTs: RSA PKCS#1 and PSS, ECDSA P-256, EdDSA over Ed25519. */
export const CLIENT_JWS_ALGS = ['RS256', 'PS256', 'ES256', 'EdDSA', 'Ed25519'] as const;
export type ClientJwsAlg = (typeof CLIENT_JWS_ALGS)[number];

export function clientJwsAlg(value: unknown): ClientJwsAlg | undefined {
  return CLIENT_JWS_ALGS.find((known) => known === value);
}

/** A compact JWS split into its parts; the signature is not checked yet. */
export interface CompactJws {
  /** The protected header's base64url text. */
  headerSegment: string;
  /** The ASCII `header.payload` the signature covers. */
  signingInput: string;
  payloadSegment: string;
  signature: Buffer;
}

const COMPACT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** The parts of a compact JWS of at most `maxLength` characters, or undefined when it is not one. */
export function compactJws(token: string, maxLength: number): CompactJws | undefined {
  if (token.length > maxLength || !COMPACT.test(token)) return undefined;
  const firstDot = token.indexOf('.');
  const lastDot = token.lastIndexOf('.');
  return {
    headerSegment: token.slice(0, firstDot),
    signingInput: token.slice(0, lastDot),
    payloadSegment: token.slice(firstDot + 1, lastDot),
    signature: Buffer.from(token.slice(lastDot + 1), 'base64url'),
  };
}

/** A base64url segment holding a JSON object, as a record of its members; undefined when it is anything else. */
export function jsonObjectSegment(segment: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  return isRecord(value) ? value : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The key type each algorithm needs (as jose requires it): P-256 for ES256, RSA of 2048 bits or more, Ed25519. */
export function keyFitsAlg(key: KeyObject, alg: ClientJwsAlg): boolean {
  const details = key.asymmetricKeyDetails;
  switch (alg) {
    case 'ES256':
      return key.asymmetricKeyType === 'ec' && details?.namedCurve === 'prime256v1';
    case 'RS256':
    case 'PS256':
      return key.asymmetricKeyType === 'rsa' && (details?.modulusLength ?? 0) >= 2048;
    case 'EdDSA':
    case 'Ed25519':
      return key.asymmetricKeyType === 'ed25519';
  }
}

/**
 * RFC 7515 §5.2: the signature over the ASCII `header.payload` under the algorithm's parameters (RFC 7518 §3.3-3.5,
 * RFC 8037), synchronously. False for a signature that does not verify or cannot be read.
 */
export function signatureVerifies(alg: ClientJwsAlg, key: KeyObject, signingInput: string, signature: Buffer): boolean {
  const data = Buffer.from(signingInput, 'ascii');
  try {
    switch (alg) {
      case 'ES256':
        return verify('sha256', data, { key, dsaEncoding: 'ieee-p1363' }, signature);
      case 'RS256':
        return verify('sha256', data, key, signature);
      case 'PS256':
        return verify(
          'sha256',
          data,
          { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST },
          signature,
        );
      case 'EdDSA':
      case 'Ed25519':
        return verify(null, data, key, signature);
    }
  } catch {
    return false;
  }
}

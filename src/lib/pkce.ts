import { safeEqual, sha256Base64Url } from './crypto';

/** RFC 7636 §4.2: a challenge is 43 base64url characters (SHA-256 of the verifier, unpadded). */
export const CODE_CHALLENGE_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** RFC 7636 §4.1: verifier of 43..128 unreserved characters. */
export const CODE_VERIFIER_PATTERN = /^[A-Za-z0-9._~-]{43,128}$/;

export function verifyPkceS256(verifier: string, challenge: string): boolean {
  if (!CODE_VERIFIER_PATTERN.test(verifier)) return false;
  return safeEqual(sha256Base64Url(verifier), challenge);
}

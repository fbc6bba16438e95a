import { createHash, createHmac, KeyObject, timingSafeEqual } from 'node:crypto';
import type { JWK } from 'jose';
import { spendJti } from '../../db/repositories/used-jtis.repo';
import { jose } from '../../lib/jose';
import { compactJws, jsonObjectSegment, keyFitsAlg, signatureVerifies } from '../../lib/jws';
import type { AppContext, ServiceContext } from '../context';

/**
 * DPoP (RFC 9449): a client proves, request by request, that it holds the private key an access token (and a public
 * client's refresh token) is bound to. One `verifyDpopProof` checks a proof wherever one is presented (the token
 * endpoint, userinfo, /api/auth/me); `cnf.jkt` in a token is the key's RFC 7638 thumbprint (`jkt`).
 *
 * A proof is accepted when:
 * - it is a compact JWS with `typ: dpop+jwt`, an `alg` of DPOP_ALGS and a public `jwk` header (never a private or
 *   symmetric key, and a key of the algorithm's type: a P-256 key for ES256, RSA of at least 2048 bits for RS256 and
 *   PS256, Ed25519 for EdDSA), no `crit` header, and a signature that verifies (see proofHeader and signatureVerifies:
 *   jose imports the key and computes its thumbprint once per header; node:crypto checks each signature);
 * - `htm` is the request's method and `htu` its URL, both compared without query and fragment (§4.3);
 * - `iat` is within DPOP_PROOF_WINDOW_S of now, either way;
 * - `ath` is the base64url SHA-256 of the access token, when one is presented with it (§4.3, §7);
 * - `nonce` is one this server handed out, when nonces are required (the `dpop_nonce_required` setting, §8, §9);
 * - its `jti` was never seen for this key within the window: spent in PostgreSQL with one insert (used-jtis.repo), so
 *   two instances never both accept the same proof.
 */

/** The signature algorithms a proof may use (discovery's `dpop_signing_alg_values_supported`). */
export const DPOP_ALGS = ['ES256', 'RS256', 'PS256', 'EdDSA', 'Ed25519'] as const;
/** How far `iat` may be from now, either way (seconds); a `jti` is remembered this long past its `iat`. */
export const DPOP_PROOF_WINDOW_S = 60;
/** A server nonce is good for the window it was made in and the next one (so 60 to 120 seconds). */
export const DPOP_NONCE_WINDOW_S = 60;
const MAX_PROOF_LENGTH = 8192;

/** Why a proof was refused: `use_dpop_nonce` asks the client to repeat the request with the nonce it is given. */
export class DpopProofRefused extends Error {
  override name = 'DpopProofRefused';
  constructor(
    readonly error: 'invalid_dpop_proof' | 'use_dpop_nonce',
    message: string,
  ) {
    super(message);
  }
}

/** A verified proof: the thumbprint of its key, what a token is bound to (`cnf.jkt`). */
export interface DpopProof {
  jkt: string;
}

export interface DpopRequest {
  /** The HTTP method of the request the proof came with. */
  method: string;
  /** The URL of that request as the client addressed it (the server's BASE_URL and the path). */
  url: string;
  /** The access token presented with the proof (userinfo, /api/auth/me): `ath` must be its hash. */
  accessToken?: string;
  /** The proof must carry a nonce of this server (`dpop_nonce_required`). */
  requireNonce: boolean;
}

/** RFC 9449 §4.2 `ath` / RFC 7638: base64url of the SHA-256 of the ASCII access token. */
export function accessTokenHash(accessToken: string): string {
  return createHash('sha256').update(accessToken, 'ascii').digest('base64url');
}

/** The RFC 7638 SHA-256 thumbprint of a public JWK, base64url (`cnf.jkt`). */
export async function jkt(jwk: JWK): Promise<string> {
  return jose().calculateJwkThumbprint(jwk, 'sha256');
}

/** §4.3 item 9: a URL without its query and fragment, normalised as the WHATWG parser does (scheme, host, port). */
function withoutQuery(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return undefined;
  }
}

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

type DpopAlg = (typeof DPOP_ALGS)[number];

/** What a proof's protected header says once it is judged: the algorithm, the key and its thumbprint. */
interface ProofHeader {
  alg: DpopAlg;
  key: KeyObject;
  jkt: string;
}

/**
 * Judged headers by their exact base64url text (issue 34's speed bound): a client signs every proof with one key, so
 * its proofs share one header, and the header is decoded, checked, its key imported and its thumbprint computed once.
 * The text is the whole header, so a kept entry is exactly what that header says. Bounded; the oldest goes first.
 */
const headerCache = new Map<string, ProofHeader>();
const HEADER_CACHE_SIZE = 1000;

function refuse(message: string): DpopProofRefused {
  return new DpopProofRefused('invalid_dpop_proof', message);
}

async function proofHeader(segment: string): Promise<ProofHeader> {
  const kept = headerCache.get(segment);
  if (kept) return kept;
  const fields = jsonObjectSegment(segment);
  if (!fields) throw refuse('The DPoP proof header is not readable');
  if (fields.typ !== 'dpop+jwt') throw refuse('The DPoP proof must have typ dpop+jwt');
  const alg = DPOP_ALGS.find((known) => known === fields.alg);
  if (!alg) throw refuse(`The DPoP proof must be signed with one of ${DPOP_ALGS.join(', ')}`);
  // No JWS extension is understood here (RFC 7515 §4.1.11: a crit header this server cannot honour is refused).
  if (fields.crit !== undefined) throw refuse('The DPoP proof must not carry a crit header');
  const jwk: unknown = fields.jwk;
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) throw refuse('The DPoP proof must carry its public key (jwk)');
  const members = Object.fromEntries(Object.entries(jwk));
  const kty = members.kty;
  if (typeof kty !== 'string') throw refuse('The DPoP proof must carry its public key (jwk with kty)');
  const publicJwk: JWK = { ...members, kty };
  if (PRIVATE_MEMBERS.some((m) => m in publicJwk)) throw refuse('The DPoP proof must carry a public key, never a private one');
  let key: KeyObject;
  let thumbprint: string;
  try {
    thumbprint = await jkt(publicJwk);
    const imported = await jose().importJWK({ ...publicJwk, ext: true }, alg);
    if (!(imported instanceof KeyObject) || imported.type !== 'public') throw refuse('The DPoP proof must carry a public key');
    key = imported;
  } catch (err) {
    if (err instanceof DpopProofRefused) throw err;
    if (err instanceof jose().errors.JOSEError || err instanceof TypeError)
      throw refuse(`The DPoP proof does not verify (${describe(err)})`);
    throw err;
  }
  if (!keyFitsAlg(key, alg)) throw refuse('The DPoP proof does not verify (its key does not fit its alg)');
  const judged = { alg, key, jkt: thumbprint };
  if (headerCache.size >= HEADER_CACHE_SIZE) {
    const oldest = headerCache.keys().next().value;
    if (oldest !== undefined) headerCache.delete(oldest);
  }
  headerCache.set(segment, judged);
  return judged;
}

/** The one `DPoP` header of a request, or undefined; more than one (or a list) is refused. */
export function dpopHeaderOf(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value) || value.includes(',')) throw refuse('Send exactly one DPoP header');
  return value;
}

/** Verifies a DPoP proof for one request (see the module comment); throws DpopProofRefused. */
export async function verifyDpopProof(ctx: ServiceContext, proof: string, request: DpopRequest): Promise<DpopProof> {
  const jws = compactJws(proof, MAX_PROOF_LENGTH);
  if (!jws) throw refuse('The DPoP proof is not a compact JWS');
  const header = await proofHeader(jws.headerSegment);
  if (!signatureVerifies(header.alg, header.key, jws.signingInput, jws.signature)) {
    throw refuse('The DPoP proof does not verify (ERR_JWS_SIGNATURE_VERIFICATION_FAILED)');
  }
  const claims = jsonObjectSegment(jws.payloadSegment);
  if (!claims) throw refuse('The DPoP proof does not verify (ERR_JWT_INVALID)');
  const thumbprint = header.jkt;

  const { htm, htu, iat, jti, ath, nonce, exp, nbf } = claims;
  const now = ctx.clock.now().getTime() / 1000;
  // RFC 7519 §4.1.4-4.1.5, as jose judged them: a proof need not carry exp or nbf, but one that does must be current.
  if (exp !== undefined && (typeof exp !== 'number' || !(exp > now))) throw refuse('The DPoP proof does not verify (ERR_JWT_EXPIRED)');
  if (nbf !== undefined && (typeof nbf !== 'number' || !(nbf <= now))) {
    throw refuse('The DPoP proof does not verify (ERR_JWT_CLAIM_VALIDATION_FAILED)');
  }
  if (typeof htm !== 'string' || htm !== request.method.toUpperCase()) throw refuse(`The DPoP proof's htm must be ${request.method}`);
  const expected = withoutQuery(request.url);
  // Two unreadable URLs are not equal: a request target in absolute form makes BASE_URL + target no URL at all.
  if (expected === undefined || typeof htu !== 'string' || htu.length > 4096 || withoutQuery(htu) !== expected) {
    throw refuse(`The DPoP proof's htu must be ${expected ?? request.url}`);
  }
  if (typeof iat !== 'number' || !Number.isFinite(iat) || Math.abs(now - iat) > DPOP_PROOF_WINDOW_S) {
    throw refuse(`The DPoP proof's iat must be within ${DPOP_PROOF_WINDOW_S} seconds of now`);
  }
  if (typeof jti !== 'string' || jti.length === 0 || jti.length > 256) throw refuse('The DPoP proof needs a jti');
  if (request.accessToken !== undefined) {
    if (typeof ath !== 'string' || !equal(ath, accessTokenHash(request.accessToken))) {
      throw refuse("The DPoP proof's ath must be the hash of the access token it is sent with");
    }
  }
  if (request.requireNonce && (typeof nonce !== 'string' || !nonceIsCurrent(ctx, nonce))) {
    throw new DpopProofRefused('use_dpop_nonce', 'Repeat the request with a DPoP proof carrying the nonce in the DPoP-Nonce header');
  }
  const spentUntil = new Date((Math.floor(iat) + DPOP_PROOF_WINDOW_S + 1) * 1000);
  if (!(await spendJti(ctx.db, 'dpop_proof', thumbprint, jti, spentUntil))) throw refuse('This DPoP proof was used before');
  return { jkt: thumbprint };
}

function describe(err: unknown): string {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : 'invalid';
}

function equal(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Server nonces (§8, §9) are stateless: the HMAC of a 60-second window under the access-token secret, so that every
 * instance makes and accepts the same ones without a table. A nonce is good in its window and the next.
 */
function nonceFor(ctx: AppContext, window: number): string {
  return createHmac('sha256', ctx.config.jwtAccessSecret).update(`dpop-nonce\u0000${window}`).digest('base64url');
}

function currentWindow(ctx: AppContext): number {
  return Math.floor(ctx.clock.now().getTime() / 1000 / DPOP_NONCE_WINDOW_S);
}

/** The nonce to hand out now (`DPoP-Nonce` header). */
export function currentDpopNonce(ctx: AppContext): string {
  return nonceFor(ctx, currentWindow(ctx));
}

function nonceIsCurrent(ctx: ServiceContext, nonce: string): boolean {
  const window = currentWindow(ctx);
  return equal(nonce, nonceFor(ctx, window)) || equal(nonce, nonceFor(ctx, window - 1));
}

/** Whether the server demands nonces in proofs (the `dpop_nonce_required` setting). */
export function dpopNonceRequired(ctx: AppContext): boolean {
  return ctx.settings.current.values.dpop_nonce_required;
}

import type { JsonWebKeySet, OAuthClientRow } from '../../db/repositories/oauth-clients.repo';
import { spendJti } from '../../db/repositories/used-jtis.repo';
import { KeyObject } from 'node:crypto';
import { jose } from '../../lib/jose';
import { clientJwsAlg, compactJws, jsonObjectSegment, keyFitsAlg, signatureVerifies, type CompactJws } from '../../lib/jws';
import type { ServiceContext } from '../context';
import { ClientKeysUnavailable } from './client-keys';

/**
 * private_key_jwt (issue 34; RFC 7523 §3, OIDC Core §9): the checks of a client assertion once the client it names
 * is known and registered for the method. `iss` = `sub` = client_id, `aud` the issuer, the token endpoint's URL or the
 * URL of the endpoint called, signed (RS256, PS256, ES256, EdDSA) by a key of the client's `jwks` or `jwks_uri`
 * (fetched anew once when the `kid` is unknown), `exp` in the future and at most 5 minutes away, and a `jti` spent
 * once in PostgreSQL. The signature is checked synchronously with node:crypto (lib/jws.ts, as DPoP proofs are); jose
 * chooses the key from the client's set and imports it once per set; the claims are judged as jose's jwtVerify would.
 */

/** An assertion may be valid for at most this long from when it is received. */
export const ASSERTION_MAX_LIFETIME_S = 300;
/** The longest assertion read at all. */
const MAX_ASSERTION_LENGTH = 16_384;
/** Clock skew tolerated on `exp`, `nbf` and `iat`. */
const CLOCK_TOLERANCE_S = 30;

/** Why an assertion was refused (the audit row's reason); the client sees one `invalid_client`. */
export class AssertionRefused extends Error {
  override name = 'AssertionRefused';
  constructor(
    readonly reason: 'invalid_assertion' | 'assertion_replayed' | 'keys_unavailable',
    message: string,
  ) {
    super(message);
  }
}

/** An assertion read but not verified: its parts, its payload and the client it names (`iss`). */
export interface ReadAssertion {
  issuer: string;
  jws: CompactJws;
  payload: Record<string, unknown>;
}

/**
 * The parts and unverified payload of an assertion (to find the client by its `iss`), or undefined when it is not a
 * compact JWS whose payload is an object with a string `iss`.
 */
export function readAssertion(assertion: string): ReadAssertion | undefined {
  const jws = compactJws(assertion, MAX_ASSERTION_LENGTH);
  const payload = jws && jsonObjectSegment(jws.payloadSegment);
  const iss = payload?.iss;
  if (!jws || !payload || typeof iss !== 'string' || iss.length === 0 || iss.length > 2048) return undefined;
  return { issuer: iss, jws, payload };
}

/**
 * The set as jose matches it: an Ed25519 key published with `alg: EdDSA` also verifies a signature labelled `Ed25519`
 * (RFC 9864's name for the same algorithm) and the reverse, so an OKP key's `alg` is left out of the match.
 */
function usable(set: JsonWebKeySet): import('jose').JSONWebKeySet {
  return {
    keys: set.keys.map((k) => {
      if (k.kty !== 'OKP') return k;
      const { alg: _alg, ...rest } = k;
      return rest;
    }),
  };
}

/**
 * jose's local key sets, kept so that a client's next assertion is checked without importing its key again: by the
 * stored set itself (the client cache and the jwks_uri cache hand out the same object until it changes), else by its
 * content (a client row read anew per request). Bounded; the oldest entry goes first. The content is the key, so a
 * replaced or rotated set is a new entry.
 */
type LocalKeySet = ReturnType<ReturnType<typeof jose>['createLocalJWKSet']>;
const keySetsByObject = new WeakMap<JsonWebKeySet, LocalKeySet>();
const localKeySets = new Map<string, LocalKeySet>();
const LOCAL_KEY_SETS = 500;

function localKeySet(stored: JsonWebKeySet): LocalKeySet {
  const same = keySetsByObject.get(stored);
  if (same) return same;
  const set = usable(stored);
  const id = JSON.stringify(set);
  let keys = localKeySets.get(id);
  if (!keys) {
    if (localKeySets.size >= LOCAL_KEY_SETS) {
      const oldest = localKeySets.keys().next().value;
      if (oldest !== undefined) localKeySets.delete(oldest);
    }
    keys = jose().createLocalJWKSet(set);
    localKeySets.set(id, keys);
  }
  keySetsByObject.set(stored, keys);
  return keys;
}

/** Why jose or the checks below refused an assertion, as the audit row and error_description say it. */
function invalid(code: string): AssertionRefused {
  return new AssertionRefused('invalid_assertion', `Invalid client assertion (${code})`);
}

/** `aud` (a string or an array of strings) names one of the accepted audiences. */
function audienceMatches(aud: unknown, audience: readonly string[]): boolean {
  if (typeof aud === 'string') return audience.includes(aud);
  return Array.isArray(aud) && aud.some((a) => typeof a === 'string' && audience.includes(a));
}

/**
 * RFC 7519 §4.1 as jose's jwtVerify judges them with `issuer`, `subject`, `audience`, `clockTolerance` and
 * `requiredClaims: ['exp', 'jti']`: what the payload of a verified signature must say.
 */
function claimsRefusal(payload: Record<string, unknown>, clientId: string, audience: readonly string[], now: number): string | undefined {
  const { iss, sub, aud, exp, nbf, iat, jti } = payload;
  if (exp === undefined || jti === undefined) return 'ERR_JWT_CLAIM_VALIDATION_FAILED';
  if (iss !== clientId || sub !== clientId || !audienceMatches(aud, audience)) return 'ERR_JWT_CLAIM_VALIDATION_FAILED';
  if (iat !== undefined && typeof iat !== 'number') return 'ERR_JWT_CLAIM_VALIDATION_FAILED';
  if (nbf !== undefined && (typeof nbf !== 'number' || nbf > now + CLOCK_TOLERANCE_S)) return 'ERR_JWT_CLAIM_VALIDATION_FAILED';
  if (typeof exp !== 'number') return 'ERR_JWT_CLAIM_VALIDATION_FAILED';
  if (exp <= now - CLOCK_TOLERANCE_S) return 'ERR_JWT_EXPIRED';
  return undefined;
}

export async function verifyClientAssertion(
  ctx: ServiceContext,
  client: OAuthClientRow,
  { jws, payload }: ReadAssertion,
  endpointUrl: string,
  /** What the request must still meet once the assertion verifies, checked before its `jti` is spent (it may throw). */
  beforeSpend?: (client: OAuthClientRow) => void | Promise<void>,
): Promise<void> {
  const { errors } = jose();
  const now = ctx.clock.now().getTime() / 1000;
  const audience = [...new Set([ctx.config.oidcIssuer, `${ctx.config.baseUrl}/api/oauth/token`, endpointUrl])];

  // RFC 7515 §5.2, checked synchronously (lib/jws.ts): the header names a known algorithm and no extension; jose
  // chooses the key from the client's set (by kid, key type and alg) and imports it once per set.
  const header = jsonObjectSegment(jws.headerSegment);
  if (!header) throw invalid('ERR_JWS_INVALID');
  const alg = clientJwsAlg(header.alg);
  if (!alg) throw invalid(typeof header.alg === 'string' ? 'ERR_JOSE_ALG_NOT_ALLOWED' : 'ERR_JWS_INVALID');
  if (header.crit !== undefined) throw invalid('ERR_JWS_INVALID');

  const storedKeySet = async (refresh: boolean) => {
    if (client.jwks) return client.jwks;
    if (!client.jwksUri) throw new AssertionRefused('keys_unavailable', 'The client has no keys');
    try {
      return await ctx.clientKeys.get(client.jwksUri, { refresh });
    } catch (err) {
      if (err instanceof ClientKeysUnavailable) {
        ctx.logger.info({ clientId: client.clientId, reason: err.message, detail: err.detail }, 'client jwks_uri unusable');
        throw new AssertionRefused('keys_unavailable', err.message);
      }
      throw err;
    }
  };
  const keyFor = async (refresh: boolean) => localKeySet(await storedKeySet(refresh))({ ...header, alg });

  let key: unknown;
  try {
    try {
      key = await keyFor(false);
    } catch (err) {
      // A key the cached set does not hold: the client may have rotated; fetch the set anew (within the cool-down).
      if (!(err instanceof errors.JWKSNoMatchingKey) || !client.jwksUri) throw err;
      key = await keyFor(true);
    }
  } catch (err) {
    if (err instanceof AssertionRefused) throw err;
    if (err instanceof errors.JOSEError) throw invalid(err.code);
    throw err;
  }
  if (!(key instanceof KeyObject) || key.type !== 'public' || !keyFitsAlg(key, alg)) throw invalid('ERR_JOSE_NOT_SUPPORTED');
  if (!signatureVerifies(alg, key, jws.signingInput, jws.signature)) throw invalid('ERR_JWS_SIGNATURE_VERIFICATION_FAILED');
  const refusal = claimsRefusal(payload, client.clientId, audience, Math.floor(now));
  if (refusal) throw invalid(refusal);

  const { exp } = payload;
  // claimsRefusal checked it; the type says it may be anything.
  if (typeof exp !== 'number') throw invalid('ERR_JWT_CLAIM_VALIDATION_FAILED');
  if (exp - now > ASSERTION_MAX_LIFETIME_S + CLOCK_TOLERANCE_S) {
    throw new AssertionRefused('invalid_assertion', `The client assertion may be valid for at most ${ASSERTION_MAX_LIFETIME_S} seconds`);
  }
  const jti = payload.jti;
  if (typeof jti !== 'string' || jti.length === 0 || jti.length > 256) {
    throw new AssertionRefused('invalid_assertion', 'The client assertion needs a jti');
  }
  // A request refused for another reason (a DPoP proof the client or the API requires is missing, a pushed authorization
  // request's parameters) leaves the assertion unspent, so that the client may repeat the request with it.
  await beforeSpend?.(client);
  const spentUntil = new Date((exp + CLOCK_TOLERANCE_S) * 1000);
  if (!(await spendJti(ctx.db, 'client_assertion', client.clientId, jti, spentUntil))) {
    throw new AssertionRefused('assertion_replayed', 'This client assertion was used before');
  }
}

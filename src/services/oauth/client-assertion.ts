import type { JsonWebKeySet, OAuthClientRow } from '../../db/repositories/oauth-clients.repo';
import { spendJti } from '../../db/repositories/used-jtis.repo';
import { jose } from '../../lib/jose';
import type { ServiceContext } from '../context';
import { CLIENT_ASSERTION_ALGS, ClientKeysUnavailable } from './client-keys';

/**
 * private_key_jwt (issue 34; RFC 7523 §3, OIDC Core §9): the checks of a client assertion once the client it names
 * is known and registered for the method. `iss` = `sub` = client_id, `aud` the issuer, the token endpoint's URL or the
 * URL of the endpoint called, signed (RS256, PS256, ES256, EdDSA) by a key of the client's `jwks` or `jwks_uri`
 * (fetched anew once when the `kid` is unknown), `exp` in the future and at most 5 minutes away, and a `jti` spent
 * once in PostgreSQL.
 */

/** An assertion may be valid for at most this long from when it is received. */
export const ASSERTION_MAX_LIFETIME_S = 300;
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

/** The unverified `iss` of an assertion (to find the client), or undefined when it is not a JWT with a string `iss`. */
export function assertionIssuer(assertion: string): string | undefined {
  if (assertion.length > 16_384 || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(assertion)) return undefined;
  try {
    const iss = jose().decodeJwt(assertion).iss;
    return typeof iss === 'string' && iss.length > 0 && iss.length <= 2048 ? iss : undefined;
  } catch {
    return undefined;
  }
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

export async function verifyClientAssertion(
  ctx: ServiceContext,
  client: OAuthClientRow,
  assertion: string,
  endpointUrl: string,
  /** What the request must still meet once the assertion verifies, checked before its `jti` is spent (it may throw). */
  beforeSpend?: (client: OAuthClientRow) => void | Promise<void>,
): Promise<void> {
  const { jwtVerify, errors } = jose();
  const now = ctx.clock.now();
  const audience = [...new Set([ctx.config.oidcIssuer, `${ctx.config.baseUrl}/api/oauth/token`, endpointUrl])];

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
  const verify = async (refresh: boolean) =>
    jwtVerify(assertion, localKeySet(await storedKeySet(refresh)), {
      algorithms: [...CLIENT_ASSERTION_ALGS],
      issuer: client.clientId,
      subject: client.clientId,
      audience,
      currentDate: now,
      clockTolerance: CLOCK_TOLERANCE_S,
      requiredClaims: ['exp', 'jti'],
    });

  let payload: import('jose').JWTPayload;
  try {
    try {
      ({ payload } = await verify(false));
    } catch (err) {
      // A key the cached set does not hold: the client may have rotated; fetch the set anew (within the cool-down).
      if (!(err instanceof errors.JWKSNoMatchingKey) || !client.jwksUri) throw err;
      ({ payload } = await verify(true));
    }
  } catch (err) {
    if (err instanceof AssertionRefused) throw err;
    if (err instanceof errors.JOSEError) throw new AssertionRefused('invalid_assertion', `Invalid client assertion (${err.code})`);
    throw err;
  }
  const { exp } = payload;
  // jose checked it (requiredClaims); the type says it may be absent.
  if (exp === undefined) throw new AssertionRefused('invalid_assertion', 'The client assertion must carry exp');
  if (exp - now.getTime() / 1000 > ASSERTION_MAX_LIFETIME_S + CLOCK_TOLERANCE_S) {
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

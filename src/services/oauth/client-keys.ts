import { createPublicKey } from 'node:crypto';
import { CLIENT_JWS_ALGS } from '../../lib/jws';
import type { JsonWebKeySet } from '../../db/repositories/oauth-clients.repo';
import type { Clock } from '../../lib/clock';
import type { Said } from '../../errors';
import { say, type ValidationKey, type ValidationParams } from '../../i18n';
import { outboundRequest, OutboundRefused, type OutboundPolicy } from '../../lib/outbound-http';
import { isLoopbackHost } from '../webhooks/webhook-policy';
import { cacheLifetimeSeconds } from './registration/metadata-document-policy';
import { setNewest } from '../../lib/bounded-map';

/**
 * The public keys of private_key_jwt clients (issue 34; RFC 7523, RFC 7591 §2 `jwks` / `jwks_uri`): the rules a key
 * set and a key-set URL must meet (pure, tested as tables in test/unit/client-keys.test.ts), and the fetcher that
 * reads `jwks_uri` documents through lib/outbound-http.ts and caches them.
 */

/**
 * The assertion algorithms accepted (and announced in discovery). `Ed25519` is EdDSA over Ed25519 by its fully
 * specified name (RFC 9864), which oauth4webapi signs with.
 */
export const CLIENT_ASSERTION_ALGS = CLIENT_JWS_ALGS;

export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

const MAX_KEYS = 10;

/** A refusal with its English reason and catalogue key. */
function refusal(key: ValidationKey, params?: ValidationParams): { ok: false; reason: string; said: Said } {
  const { message, said } = say(key, params);
  return { ok: false, reason: message, said };
}
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
const JWKS_URI_MAX_LENGTH = 2048;

/** A refusal's `reason` is the English sentence; `said` its catalogue key (src/i18n), for the console's language. */
export type KeyVerdict<T> = { ok: true; value: T } | { ok: false; reason: string; said?: Said };

/**
 * A JWK Set a client may register: 1 to 10 public signature keys (RSA of at least 2048 bits, EC P-256, OKP Ed25519),
 * none carrying a private or symmetric member, each one Node can import.
 */
export function checkJwks(value: unknown): KeyVerdict<JsonWebKeySet> {
  const fail = (key: ValidationKey, params?: ValidationParams): KeyVerdict<JsonWebKeySet> => refusal(key, params);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('jwksObject');
  const keys = 'keys' in value ? value.keys : undefined;
  if (!Array.isArray(keys) || keys.length === 0) return fail('jwksKeysEmpty');
  if (keys.length > MAX_KEYS) return fail('jwksTooMany', { max: String(MAX_KEYS) });
  const kept: JsonWebKeySet['keys'] = [];
  for (const [i, key] of keys.entries()) {
    if (typeof key !== 'object' || key === null || Array.isArray(key)) return fail('jwksKeyObject', { i: String(i) });
    // An object (checked above) whose members are each checked below before the key is kept.
    const jwk: JsonWebKeySet['keys'][number] = key;
    if (PRIVATE_MEMBERS.some((m) => m in jwk)) return fail('jwksKeyPrivate', { i: String(i) });
    if (jwk.use !== undefined && jwk.use !== 'sig') return fail('jwksKeyUse', { i: String(i) });
    if (jwk.kid !== undefined && (typeof jwk.kid !== 'string' || jwk.kid.length > 200)) return fail('jwksKeyKid', { i: String(i) });
    if (jwk.alg !== undefined && !CLIENT_ASSERTION_ALGS.some((alg) => alg === jwk.alg)) {
      return fail('jwksKeyAlg', { i: String(i), algs: CLIENT_ASSERTION_ALGS.join(', ') });
    }
    const kty = jwk.kty;
    if (kty === 'EC' && jwk.crv !== 'P-256') return fail('jwksKeyEc', { i: String(i) });
    if (kty === 'OKP' && jwk.crv !== 'Ed25519') return fail('jwksKeyOkp', { i: String(i) });
    if (kty !== 'RSA' && kty !== 'EC' && kty !== 'OKP') return fail('jwksKeyType', { i: String(i) });
    try {
      const imported = createPublicKey({ key: jwk, format: 'jwk' });
      if (kty === 'RSA' && (imported.asymmetricKeyDetails?.modulusLength ?? 0) < 2048) {
        return fail('jwksKeyRsaBits', { i: String(i) });
      }
    } catch {
      return fail('jwksKeyInvalid', { i: String(i) });
    }
    kept.push(jwk);
  }
  return { ok: true, value: { keys: kept } };
}

/**
 * A `jwks_uri` a client may register: an absolute https URL (plain http only to a loopback host outside production,
 * the webhooks' rule), without credentials or fragment. Where it resolves to is judged when it is fetched.
 */
export function checkJwksUri(uri: unknown, options: { isProduction: boolean }): KeyVerdict<string> {
  if (typeof uri !== 'string' || uri.length === 0) return refusal('jwksUriUrl');
  if (uri.length > JWKS_URI_MAX_LENGTH) return refusal('jwksUriTooLong');
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return refusal('jwksUriAbsolute');
  }
  if (/[\s\x00-\x1f\x7f]/.test(uri)) return refusal('jwksUriWhitespace');
  const httpAllowed = !options.isProduction && isLoopbackHost(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && httpAllowed)) {
    return refusal('jwksUriHttps');
  }
  if (url.username || url.password) return refusal('jwksUriCredentials');
  if (url.hash || uri.includes('#')) return refusal('jwksUriFragment');
  return { ok: true, value: uri };
}

/**
 * What a private_key_jwt registration must say, whoever makes it: exactly one of `jwks` and `jwks_uri`, each valid.
 * `jwks` is returned normalised (only its keys).
 */
export function checkClientKeys(
  input: { jwks?: unknown; jwksUri?: unknown },
  options: { isProduction: boolean },
): KeyVerdict<{ jwks: JsonWebKeySet | null; jwksUri: string | null }> {
  const hasJwks = input.jwks !== undefined && input.jwks !== null;
  const hasUri = input.jwksUri !== undefined && input.jwksUri !== null;
  if (hasJwks === hasUri) return refusal('keysExactlyOne');
  if (hasJwks) {
    const jwks = checkJwks(input.jwks);
    return jwks.ok ? { ok: true, value: { jwks: jwks.value, jwksUri: null } } : jwks;
  }
  const uri = checkJwksUri(input.jwksUri, options);
  return uri.ok ? { ok: true, value: { jwks: null, jwksUri: uri.value } } : uri;
}

/** The fetched key set could not be used; `message` is safe to log and to audit (it names no internal address). */
export class ClientKeysUnavailable extends Error {
  override name = 'ClientKeysUnavailable';
  constructor(
    message: string,
    readonly detail?: string,
  ) {
    super(message);
  }
}

export interface ClientKeysFetcher {
  /** The key set at `uri`, from the cache while it is fresh; `refresh` fetches anew (an unknown `kid`), at most once per cool-down. */
  get(uri: string, options?: { refresh?: boolean }): Promise<JsonWebKeySet>;
  readonly size: number;
}

export interface ClientKeysFetcherOptions {
  clock: Clock;
  /** The outbound rules in force for one URL (read per fetch: webhook_allow_private is a runtime setting). */
  policyFor: (uri: string) => OutboundPolicy;
  maxEntries?: number;
}

/** A fetch for an unknown `kid` happens at most this often per URL (a stream of made-up kids must not become a stream of fetches). */
export const JWKS_REFETCH_COOLDOWN_S = 10;
export const JWKS_TIMEOUT_MS = 5_000;
export const JWKS_MAX_BYTES = 64 * 1024;

export function createClientKeysFetcher(options: ClientKeysFetcherOptions): ClientKeysFetcher {
  const maxEntries = options.maxEntries ?? 1000;
  const cache = new Map<string, { jwks: JsonWebKeySet; fetchedAtMs: number; expiresAtMs: number }>();
  const inFlight = new Map<string, Promise<JsonWebKeySet>>();
  // A URL whose fetch failed answers that failure, without fetching, for the cool-down: assertions naming a client
  // whose jwks_uri fails (anyone can send them) must not turn into one outbound request each.
  const failures = new Map<string, { atMs: number; error: ClientKeysUnavailable }>();

  async function download(uri: string): Promise<JsonWebKeySet> {
    let response;
    try {
      response = await outboundRequest(uri, { headers: { accept: 'application/jwk-set+json, application/json' } }, options.policyFor(uri));
    } catch (err) {
      if (err instanceof OutboundRefused) throw new ClientKeysUnavailable(`jwks_uri could not be fetched (${err.reason})`, err.internal);
      throw err;
    }
    if (response.status !== 200) throw new ClientKeysUnavailable(`jwks_uri answered ${response.status}`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(response.body.toString('utf8'));
    } catch {
      throw new ClientKeysUnavailable('jwks_uri did not answer JSON');
    }
    const verdict = checkJwks(parsed);
    if (!verdict.ok) throw new ClientKeysUnavailable(`jwks_uri: ${verdict.reason}`);
    const now = options.clock.now().getTime();
    // At least a minute, at most a day; without caching headers five minutes.
    const lifetime = Math.max(60, cacheLifetimeSeconds(response.headers.get('cache-control')));
    setNewest(cache, uri, { jwks: verdict.value, fetchedAtMs: now, expiresAtMs: now + lifetime * 1000 }, maxEntries);
    return verdict.value;
  }

  return {
    get size() {
      return cache.size;
    },
    async get(uri, { refresh = false } = {}) {
      const now = options.clock.now().getTime();
      const cached = cache.get(uri);
      const fresh = cached && cached.expiresAtMs > now;
      const coolingDown = cached && now - cached.fetchedAtMs < JWKS_REFETCH_COOLDOWN_S * 1000;
      if (cached && fresh && (!refresh || coolingDown)) return cached.jwks;
      const failed = failures.get(uri);
      if (failed && now - failed.atMs < JWKS_REFETCH_COOLDOWN_S * 1000) throw failed.error;
      const pending = inFlight.get(uri);
      if (pending) return pending;
      const started = download(uri)
        .then(
          (jwks) => {
            failures.delete(uri);
            return jwks;
          },
          (err: unknown) => {
            if (err instanceof ClientKeysUnavailable) {
              setNewest(failures, uri, { atMs: options.clock.now().getTime(), error: err }, maxEntries);
            }
            throw err;
          },
        )
        .finally(() => inFlight.delete(uri));
      inFlight.set(uri, started);
      return started;
    },
  };
}

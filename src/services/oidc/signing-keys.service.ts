import { createPrivateKey, createPublicKey, randomUUID, type JsonWebKey } from 'node:crypto';
import type { JWK, KeyLike } from 'jose';
import type { DbOrTrx } from '../../db';
import {
  deleteSigningKeysRetiredBefore,
  findCurrentSigningKey,
  findSigningKey,
  insertSigningKeyIfNoneCurrent,
  listPublishedSigningKeys,
  retireCurrentSigningKeys,
  type SigningKeyRow,
} from '../../db/repositories/signing-keys.repo';
import { withTransaction } from '../../db';
import { addSeconds } from '../../lib/clock';
import type { ServiceContext } from '../context';
import { jose } from '../../lib/jose';

/** A stored JWK as Node's key import reads it (the same JSON shape): a restart does not load jose (lib/jose.ts). */
const nodeJwk = (jwk: JWK): JsonWebKey => ({ ...jwk });

/** CONTRACT §9: an id_token lives one hour. */
export const ID_TOKEN_TTL_SECONDS = 3600;
/** A retired key stays published this long after the last id_token it signed expired (clock skew of verifiers). */
const RETIRED_KEY_MARGIN_SECONDS = 300;
/** How long an instance signs with the key it loaded before looking again (another instance may have rotated). */
const CURRENT_KEY_CACHE_SECONDS = 30;

export type IdTokenAlg = 'RS256' | 'ES256';

export interface SigningKey {
  kid: string;
  alg: IdTokenAlg;
  privateKey: KeyLike;
}

/**
 * What one process remembers per sealer (the KEYS_SECRET that opens the keys; one per process, shared by the context of
 * every request made from the process's, services/context.ts `forRequest`): the current key, and opened keys by kid
 * (public ones for verifying).
 */
interface KeyCache {
  current?: { key: SigningKey; loadedAt: number };
  publicKeys: Map<string, KeyLike>;
}
const caches = new WeakMap<ServiceContext['sealer'], KeyCache>();

function cacheOf(ctx: ServiceContext): KeyCache {
  let cache = caches.get(ctx.sealer);
  if (!cache) {
    cache = { publicKeys: new Map() };
    caches.set(ctx.sealer, cache);
  }
  return cache;
}

const sealPurpose = (kid: string) => `oidc-signing-key:${kid}`;

async function openSigningKey(ctx: ServiceContext, row: SigningKeyRow): Promise<SigningKey> {
  let opened: string;
  try {
    opened = ctx.sealer.open(row.privateJwkSealed, sealPurpose(row.kid));
  } catch (err) {
    // KEYS_SECRET changed (or differs between instances): say what to do rather than fail obscurely.
    throw new Error(`OpenID Connect signing key ${row.kid} does not open with this KEYS_SECRET: run npm run admin -- rotate-signing-key`, {
      cause: err,
    });
  }
  const jwk = JSON.parse(opened) as JWK;
  return { kid: row.kid, alg: row.alg as IdTokenAlg, privateKey: createPrivateKey({ key: nodeJwk(jwk), format: 'jwk' }) };
}

/** A fresh key pair; the kid is the RFC 7638 thumbprint of its public JWK. */
async function generateSigningKey(ctx: ServiceContext, alg: IdTokenAlg) {
  const { generateKeyPair, exportJWK, calculateJwkThumbprint } = jose();
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const privateJwk = await exportJWK(privateKey);
  return {
    kid,
    alg,
    publicJwk: { ...publicJwk, kid, alg, use: 'sig' },
    privateJwkSealed: ctx.sealer.seal(JSON.stringify(privateJwk), sealPurpose(kid)),
  };
}

/**
 * A JWT as every token this server signs is made (id_token, RFC 9068 access token, logout token): the current key
 * and `typ` in the header, then iss, sub, aud, iat, exp (`iat` + `ttlSeconds`) and a fresh jti unless `jti: false`.
 */
export async function signWithCurrentKey(
  ctx: ServiceContext,
  claims: Record<string, unknown>,
  jwt: { typ: string; subject: string; audience: string; iat: number; ttlSeconds: number; jti?: boolean; db?: DbOrTrx },
): Promise<string> {
  const key = await currentSigningKey(ctx, jwt.db);
  const signer = new (jose().SignJWT)(claims)
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: jwt.typ })
    .setIssuer(ctx.config.oidcIssuer)
    .setSubject(jwt.subject)
    .setAudience(jwt.audience)
    .setIssuedAt(jwt.iat)
    .setExpirationTime(jwt.iat + jwt.ttlSeconds);
  if (jwt.jti !== false) signer.setJti(randomUUID());
  return signer.sign(key.privateKey);
}

/**
 * The current key of ID_TOKEN_ALG, generated at first use (normally at start). Several instances starting at once
 * each try to insert one; the partial unique index lets exactly one win and every instance then reads that one.
 */
export async function currentSigningKey(ctx: ServiceContext, db: DbOrTrx = ctx.db): Promise<SigningKey> {
  const cache = cacheOf(ctx);
  const now = ctx.clock.now().getTime();
  if (cache.current && now - cache.current.loadedAt < CURRENT_KEY_CACHE_SECONDS * 1000) return cache.current.key;
  const alg = ctx.config.idTokenAlg;
  let row = await findCurrentSigningKey(db, alg);
  if (!row) {
    const fresh = await generateSigningKey(ctx, alg);
    if (await insertSigningKeyIfNoneCurrent(db, { ...fresh, now: ctx.clock.now() })) {
      ctx.logger.info({ kid: fresh.kid, alg }, 'OpenID Connect signing key generated');
    }
    row = await findCurrentSigningKey(db, alg);
    if (!row) throw new Error('no current OpenID Connect signing key after generation');
  }
  const key = cache.current?.key.kid === row.kid ? cache.current.key : await openSigningKey(ctx, row);
  cache.current = { key, loadedAt: now };
  return key;
}

/** Keys that may still verify a live id_token: current ones and those retired less than an id_token's life ago. */
async function publishedKeys(ctx: ServiceContext, db: DbOrTrx): Promise<SigningKeyRow[]> {
  return listPublishedSigningKeys(db, addSeconds(ctx.clock.now(), -(ID_TOKEN_TTL_SECONDS + RETIRED_KEY_MARGIN_SECONDS)));
}

/** GET /api/oauth/jwks (RFC 7517): public halves only. Read from the database, so every instance publishes the same set. */
export async function publicJwks(ctx: ServiceContext): Promise<{ keys: JWK[] }> {
  // Never an empty set: a relying party may fetch the keys before the first id_token is signed.
  await currentSigningKey(ctx);
  return { keys: (await publishedKeys(ctx, ctx.db)).map((k) => k.publicJwk) };
}

/** The public key of a published kid, for checking our own id_tokens (id_token_hint at logout). */
export async function publicKeyFor(ctx: ServiceContext, kid: string): Promise<{ key: KeyLike; alg: string } | undefined> {
  const row = await findSigningKey(ctx.db, kid);
  if (!row) return undefined;
  const cache = cacheOf(ctx);
  let key = cache.publicKeys.get(kid);
  if (!key) {
    key = createPublicKey({ key: nodeJwk(row.publicJwk), format: 'jwk' });
    cache.publicKeys.set(kid, key);
  }
  return { key, alg: row.alg };
}

/**
 * `npm run admin -- rotate-signing-key`: retires the current keys and makes a new one of ID_TOKEN_ALG current, in one
 * transaction. Retired keys stay in the JWKS until the id_tokens they signed have expired; instances pick up the
 * new key within CURRENT_KEY_CACHE_SECONDS. Keys retired long ago are deleted.
 */
export async function rotateSigningKey(ctx: ServiceContext): Promise<{ kid: string; alg: IdTokenAlg; retired: string[] }> {
  const fresh = await generateSigningKey(ctx, ctx.config.idTokenAlg);
  const now = ctx.clock.now();
  const retired = await withTransaction(ctx.db, async (trx) => {
    const kids = await retireCurrentSigningKeys(trx, now);
    await insertSigningKeyIfNoneCurrent(trx, { ...fresh, now });
    await deleteSigningKeysRetiredBefore(trx, addSeconds(now, -(ID_TOKEN_TTL_SECONDS + RETIRED_KEY_MARGIN_SECONDS)));
    await ctx.events.record(trx, { type: 'oidc.signing_key_rotated', detail: { kid: fresh.kid, alg: fresh.alg, retired: kids } });
    return kids;
  });
  caches.delete(ctx.sealer);
  return { kid: fresh.kid, alg: fresh.alg, retired };
}

/** The published keys with their status, newest first (the console's Signing keys page): never the private halves. */
export async function listSigningKeys(
  ctx: ServiceContext,
): Promise<Array<{ kid: string; alg: string; createdAt: Date; retiredAt: Date | null }>> {
  return (await publishedKeys(ctx, ctx.db)).map((k) => ({ kid: k.kid, alg: k.alg, createdAt: k.createdAt, retiredAt: k.retiredAt }));
}

import { createServer, type Server } from 'node:http';
import * as jose from 'jose';

/** A client's signing key pair as WebCrypto keys (what openid-client and oauth4webapi take), with its public JWK. */
export interface ClientKeyPair {
  privateKey: CryptoKey;
  publicJwk: Record<string, unknown>;
  kid: string;
  alg: 'ES256' | 'RS256' | 'PS256' | 'EdDSA';
}

export async function makeClientKey(alg: ClientKeyPair['alg'] = 'ES256', kid = `k-${Math.random().toString(36).slice(2)}`) {
  const params =
    alg === 'ES256'
      ? { name: 'ECDSA', namedCurve: 'P-256' }
      : alg === 'EdDSA'
        ? { name: 'Ed25519' }
        : {
            name: alg === 'PS256' ? 'RSA-PSS' : 'RSASSA-PKCS1-v1_5',
            modulusLength: 2048,
            publicExponent: new Uint8Array([1, 0, 1]),
            hash: 'SHA-256',
          };
  const pair = (await crypto.subtle.generateKey(params as EcKeyGenParams, true, ['sign', 'verify'])) as CryptoKeyPair;
  const publicJwk = (await crypto.subtle.exportKey('jwk', pair.publicKey)) as Record<string, unknown>;
  delete publicJwk.key_ops;
  delete publicJwk.ext;
  return { privateKey: pair.privateKey, publicJwk: { ...publicJwk, kid, use: 'sig', alg }, kid, alg } satisfies ClientKeyPair;
}

/** A client assertion made by hand (RFC 7523), for the refusals no library would produce. */
export async function signAssertion(
  key: ClientKeyPair,
  claims: Record<string, unknown>,
  header: Record<string, unknown> = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new jose.SignJWT({ iat: now, exp: now + 60, jti: crypto.randomUUID(), ...claims })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, ...header })
    .sign(key.privateKey);
}

/** A JWKS endpoint on 127.0.0.1 that counts its fetches; `keys` may be replaced (a rotation). */
export async function startJwksHost(initial: Array<Record<string, unknown>>) {
  const state = { keys: initial, hits: 0, cacheControl: undefined as string | undefined, status: 200 };
  const server: Server = createServer((req, res) => {
    state.hits += 1;
    res.writeHead(state.status, {
      'content-type': 'application/json',
      ...(state.cacheControl ? { 'cache-control': state.cacheControl } : {}),
    });
    res.end(JSON.stringify({ keys: state.keys }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as { port: number };
  return {
    state,
    url: `http://127.0.0.1:${port}/jwks.json`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

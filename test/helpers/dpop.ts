import { createHash, randomUUID } from 'node:crypto';
import * as jose from 'jose';
import type { ClientKeyPair } from './client-keys';

/**
 * DPoP proofs made by hand (RFC 9449 §4.2), for the refusals no client library would produce; the happy paths are
 * driven by oauth4webapi and openid-client. `claims` and `header` override what a correct proof carries.
 */
export async function dpopProof(
  key: ClientKeyPair,
  request: { htm?: string; htu: string; accessToken?: string; nonce?: string; now?: Date },
  claims: Record<string, unknown> = {},
  header: Record<string, unknown> = {},
): Promise<string> {
  const { kid: _kid, use: _use, ...jwk } = key.publicJwk;
  const iat = Math.floor((request.now ?? new Date()).getTime() / 1000);
  return new jose.SignJWT({
    htm: request.htm ?? 'POST',
    htu: request.htu,
    iat,
    jti: randomUUID(),
    ...(request.accessToken ? { ath: createHash('sha256').update(request.accessToken).digest('base64url') } : {}),
    ...(request.nonce ? { nonce: request.nonce } : {}),
    ...claims,
  })
    .setProtectedHeader(headerOf({ alg: key.alg, typ: 'dpop+jwt', jwk, ...header }))
    .sign(key.privateKey);
}

/** Any header, malformed ones included (jose's types admit only well-formed JWKs); undefined members are dropped. */
function headerOf(header: Record<string, unknown>): jose.JWTHeaderParameters {
  return JSON.parse(JSON.stringify(header));
}

/** RFC 7638 thumbprint of the key (what `cnf.jkt` must say). */
export function thumbprintOf(key: ClientKeyPair): Promise<string> {
  return jose.calculateJwkThumbprint(JSON.parse(JSON.stringify(key.publicJwk)), 'sha256');
}

/** The payload of a JWT, unverified (to read `cnf`). */
export function claimsOf(token: string): Record<string, unknown> {
  return jose.decodeJwt(token);
}

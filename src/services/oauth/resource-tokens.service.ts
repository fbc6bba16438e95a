import { jose } from '../../lib/jose';
import type { ServiceContext } from '../context';
import { ID_TOKEN_TTL_SECONDS, publicKeyFor, signWithCurrentKey } from '../oidc/signing-keys.service';

/**
 * The longest life of an RFC 9068 access token: a retired signing key stays in the JWKS for an id_token's life (plus
 * a margin) after rotation, and every token it signed must still verify until it expires.
 */
export const RESOURCE_TOKEN_MAX_TTL_SECONDS = ID_TOKEN_TTL_SECONDS;

/** The claims of an RFC 9068 access token (CONTRACT §12). */
export interface ResourceTokenClaims {
  iss: string;
  sub: string;
  aud: string;
  client_id: string;
  scope: string;
  jti: string;
  iat: number;
  exp: number;
  /** When a user session stands behind the token (its revocation ends the token at introspection). */
  sid?: string;
  /** RFC 9449 §6.1: the DPoP key the token is bound to. */
  cnf?: { jkt: string };
  /** RFC 8693 §4.1: the party acting for `sub` (a token exchanged with an actor token), the most recent outermost. */
  act?: ActClaim;
}

/** RFC 8693 §4.1: an actor, and the actors before it (nested). */
export interface ActClaim {
  sub: string;
  act?: ActClaim;
}

/**
 * An RFC 9068 JWT access token for an API (`aud`), signed with the OpenID signing keys that jwks_uri publishes, so an
 * API verifies it offline with any JOSE library. `sub` is the user, or the client itself for client_credentials.
 */
export async function signResourceToken(
  ctx: ServiceContext,
  input: {
    subject: string;
    clientId: string;
    audience: string;
    scope: string;
    ttlSeconds: number;
    sessionId?: string;
    /** RFC 9449 §6.1: the thumbprint of the DPoP key the token is bound to (`cnf.jkt`). */
    dpopJkt?: string;
    /** RFC 8693 §4.1: the actor of a delegation (token exchange). */
    act?: ActClaim;
  },
): Promise<{ token: string; expiresIn: number }> {
  const iat = Math.floor(ctx.clock.now().getTime() / 1000);
  const expiresIn = Math.min(input.ttlSeconds, RESOURCE_TOKEN_MAX_TTL_SECONDS);
  const claims: Record<string, unknown> = { client_id: input.clientId, scope: input.scope };
  if (input.sessionId) claims.sid = input.sessionId;
  if (input.dpopJkt) claims.cnf = { jkt: input.dpopJkt };
  if (input.act) claims.act = input.act;
  // RFC 9068 §2.1: typ at+jwt, so that an id_token can never pass for an access token (or the other way round).
  const jwt = { typ: 'at+jwt', subject: input.subject, audience: input.audience, iat, ttlSeconds: expiresIn };
  const token = await signWithCurrentKey(ctx, claims, jwt);
  return { token, expiresIn };
}

/** Cheap test before any verification: a JWS whose header says `typ: at+jwt`. */
export function isResourceToken(token: string): boolean {
  const dot = token.indexOf('.');
  if (dot <= 0 || dot > 1024) return false;
  try {
    const header = JSON.parse(Buffer.from(token.slice(0, dot), 'base64url').toString('utf8')) as { typ?: unknown };
    return typeof header.typ === 'string' && header.typ.toLowerCase().replace(/^application\//, '') === 'at+jwt';
  } catch {
    return false;
  }
}

/** The claims of one of our RFC 9068 tokens, verified (signature by a published key, iss, typ, expiry); else undefined. */
export async function verifyResourceToken(ctx: ServiceContext, token: string): Promise<ResourceTokenClaims | undefined> {
  if (token.length > 8192 || !isResourceToken(token)) return undefined;
  const { decodeProtectedHeader, jwtVerify } = jose();
  try {
    const { kid } = decodeProtectedHeader(token);
    if (typeof kid !== 'string') return undefined;
    const key = await publicKeyFor(ctx, kid);
    if (!key) return undefined;
    const { payload } = await jwtVerify(token, key.key, {
      algorithms: [key.alg],
      issuer: ctx.config.oidcIssuer,
      typ: 'at+jwt',
      currentDate: ctx.clock.now(),
      requiredClaims: ['sub', 'aud', 'client_id', 'jti', 'iat', 'exp'],
    });
    if (typeof payload.aud !== 'string' || typeof payload.client_id !== 'string' || typeof payload.sub !== 'string') return undefined;
    return payload as unknown as ResourceTokenClaims;
  } catch {
    return undefined;
  }
}

import { createSecretKey, KeyObject, randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';

/** Claims shared by access and refresh tokens (spec §2.1, CONTRACT §3). */
export interface TokenClaims {
  userId: string;
  email: string;
  name: string;
  roles: string[];
  sid: string;
  /** Authentication methods of the session (RFC 8176; CONTRACT §10). */
  amr?: string[];
  client_id?: string;
  scope?: string;
  /** RFC 9449 §6: the DPoP key the token is bound to (its RFC 7638 thumbprint). */
  cnf?: { jkt: string };
}

export interface AccessTokenPayload extends TokenClaims {
  jti: string;
  iat: number;
  exp: number;
  iss: string;
  aud: string;
}

export interface RefreshTokenPayload extends AccessTokenPayload {
  tokenId: string;
}

export interface JwtSignerOptions {
  accessSecret: string;
  refreshSecret: string;
  issuer: string;
  audience: string;
  accessTtlSeconds: number;
  refreshTtlSeconds: number;
}

/**
 * HS256 signing and verification. Keys are KeyObjects created once: jsonwebtoken re-derives a key from a
 * string secret on every call, which makes verification several times slower.
 */
export class JwtService {
  private readonly accessKey: KeyObject;
  private readonly refreshKey: KeyObject;

  constructor(private readonly options: JwtSignerOptions) {
    this.accessKey = createSecretKey(Buffer.from(options.accessSecret, 'utf8'));
    this.refreshKey = createSecretKey(Buffer.from(options.refreshSecret, 'utf8'));
  }

  signAccess(claims: TokenClaims, now: Date): { token: string; jti: string; expiresAt: Date } {
    const jti = randomUUID();
    const iat = Math.floor(now.getTime() / 1000);
    const exp = iat + this.options.accessTtlSeconds;
    const token = jwt.sign({ ...stripUndefined(claims), jti, iat, exp }, this.accessKey, {
      algorithm: 'HS256',
      issuer: this.options.issuer,
      audience: this.options.audience,
    });
    return { token, jti, expiresAt: new Date(exp * 1000) };
  }

  /** `expiresAt` caps the lifetime (the session's absolute end, or the row of a re-issued successor). */
  signRefresh(claims: TokenClaims, tokenId: string, now: Date, expiresAt?: Date): { token: string; expiresAt: Date } {
    const iat = Math.floor(now.getTime() / 1000);
    const exp = Math.min(iat + this.options.refreshTtlSeconds, expiresAt ? Math.floor(expiresAt.getTime() / 1000) : Infinity);
    const token = jwt.sign({ ...stripUndefined(claims), tokenId, jti: tokenId, iat, exp }, this.refreshKey, {
      algorithm: 'HS256',
      issuer: this.options.issuer,
      audience: this.options.audience,
    });
    return { token, expiresAt: new Date(exp * 1000) };
  }

  /** Returns undefined for any token that is not a valid access token (bad signature, alg, iss, aud, expiry). */
  verifyAccess(token: string, now: Date): AccessTokenPayload | undefined {
    const payload = this.verify(token, this.accessKey, now);
    if (!payload || 'tokenId' in payload) return undefined;
    return payload as unknown as AccessTokenPayload;
  }

  verifyRefresh(token: string, now: Date): RefreshTokenPayload | undefined {
    const payload = this.verify(token, this.refreshKey, now);
    if (!payload || typeof payload.tokenId !== 'string') return undefined;
    return payload as unknown as RefreshTokenPayload;
  }

  private verify(token: string, key: KeyObject, now: Date): Record<string, unknown> | undefined {
    if (typeof token !== 'string' || token.length > 8192) return undefined;
    try {
      const payload = jwt.verify(token, key, {
        algorithms: ['HS256'],
        issuer: this.options.issuer,
        audience: this.options.audience,
        clockTimestamp: Math.floor(now.getTime() / 1000),
      });
      if (typeof payload !== 'object' || payload === null) return undefined;
      if (typeof payload.userId !== 'string' || typeof payload.sid !== 'string') return undefined;
      return payload;
    } catch {
      return undefined;
    }
  }
}

function stripUndefined(value: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
}

import { createHash } from 'node:crypto';
import type { DbOrTrx } from '../../db';
import { findSessionById, oidcSidOf } from '../../db/repositories/sessions.repo';
import { findUserById } from '../../db/repositories/users.repo';
import type { ServiceContext } from '../context';
import { fullName } from '../principal';
import { parseScope } from '../oauth/scopes';
import { ID_TOKEN_TTL_SECONDS, signWithCurrentKey } from './signing-keys.service';

/**
 * OIDC Core 3.1.3.6: at_hash is the base64url of the left half of the hash of the access token's ASCII octets, the
 * hash being the one of the id_token's alg (SHA-256 for both RS256 and ES256).
 */
export function accessTokenHash(accessToken: string): string {
  const digest = createHash('sha256').update(accessToken, 'ascii').digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

/** True when the granted scope makes this an OpenID Connect grant (an id_token is due). */
export function isOpenIdScope(scope: string | undefined): boolean {
  return parseScope(scope ?? '').includes('openid');
}

/**
 * The id_token of an OAuth session (CONTRACT §9), asked for by the token service after the code grant and each
 * refresh of an `openid` grant. `auth_time` and `amr` come from the session, which inherited them from the browser
 * session that authorized; `nonce` only with the code grant (OIDC Core 12.2 keeps it out of refreshed tokens).
 * Returns undefined when the session or user is gone (the caller's grant then fails anyway).
 */
export async function issueIdToken(
  ctx: ServiceContext,
  db: DbOrTrx,
  input: { sessionId: string; clientId: string; scope: string; accessToken: string; nonce?: string | null },
): Promise<string | undefined> {
  const session = await findSessionById(db, input.sessionId);
  const user = session ? await findUserById(db, session.userId) : undefined;
  if (!session || !user) return undefined;
  return signIdToken(ctx, { sessionId: oidcSidOf(session), authTime: session.authTime, amr: session.amr, user }, input, db);
}

/** What an id_token says about its session and user, however the caller read them. */
export interface IdTokenSubject {
  /** The `sid` claim: the browser session the OAuth session belongs to, else the session itself (issue 34). */
  sessionId: string;
  authTime: Date;
  amr: string[];
  user: { id: string; email: string; emailVerified: boolean; firstName: string; lastName: string; updatedAt: Date };
}

/**
 * Signs the id_token of `subject` (the refresh grant passes the session and user its rotation statement already
 * read, so the grant makes no further query: issue 10).
 */
export async function signIdToken(
  ctx: ServiceContext,
  subject: IdTokenSubject,
  input: { clientId: string; scope: string; accessToken: string; nonce?: string | null },
  db: DbOrTrx = ctx.db,
): Promise<string> {
  const { user } = subject;
  const scopes = parseScope(input.scope);
  const claims: Record<string, unknown> = {
    auth_time: seconds(subject.authTime),
    sid: subject.sessionId,
    at_hash: accessTokenHash(input.accessToken),
    amr: subject.amr,
  };
  if (input.nonce) claims.nonce = input.nonce;
  if (scopes.includes('profile')) {
    claims.name = fullName(user.firstName, user.lastName);
    claims.given_name = user.firstName;
    claims.family_name = user.lastName;
    claims.updated_at = seconds(user.updatedAt);
  }
  if (scopes.includes('email')) {
    claims.email = user.email;
    claims.email_verified = user.emailVerified;
  }
  const iat = seconds(ctx.clock.now());
  const jwt = { typ: 'JWT', subject: user.id, audience: input.clientId, iat, ttlSeconds: ID_TOKEN_TTL_SECONDS, jti: false, db };
  return signWithCurrentKey(ctx, claims, jwt);
}

import { findUserById } from '../../db/repositories/users.repo';
import { OAuthError } from '../../errors';
import type { ServiceContext } from '../context';
import { fullName, type Principal } from '../principal';

export interface UserInfo {
  sub: string;
  name?: string;
  updated_at?: number;
  email?: string;
  email_verified?: boolean;
}

/** RFC 6750 §3.1: the challenge names the error when a token was presented. */
export function invalidToken(description = 'The access token is invalid, expired or revoked'): OAuthError {
  return new OAuthError('invalid_token', description, {
    headers: { 'WWW-Authenticate': `Bearer error="invalid_token", error_description="${description}"` },
  });
}

/**
 * Claims by scope (CONTRACT §5): sub always; name and updated_at with `profile`; email and email_verified with
 * `email`; every claim for a first-party token, which carries no scope.
 */
export async function getUserInfo(ctx: ServiceContext, principal: Principal): Promise<UserInfo> {
  const user = await findUserById(ctx.db, principal.userId);
  if (!user?.isActive) throw invalidToken();
  const firstParty = principal.clientId === undefined;
  const scopes = new Set((principal.scope ?? '').split(' ').filter(Boolean));
  const info: UserInfo = { sub: user.id };
  if (firstParty || scopes.has('profile')) {
    info.name = fullName(user.firstName, user.lastName);
    info.updated_at = Math.floor(user.updatedAt.getTime() / 1000);
  }
  if (firstParty || scopes.has('email')) {
    info.email = user.email;
    info.email_verified = user.emailVerified;
  }
  return info;
}

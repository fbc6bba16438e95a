import type { PrincipalRecord, PrincipalRole } from '../db/repositories/principal.repo';
import { ADMIN_TIER, hasPermission } from './rbac-policy';

export type { PrincipalRole };
// The rules live in rbac-policy.ts; these two are re-exported for the callers that only need the principal.
export { ADMIN_TIER, hasPermission };

/**
 * The signed-in caller of a request: its account, live roles, permissions and amr as the database says them
 * (PrincipalRecord, never read from the token), and what the token adds.
 */
export interface Principal extends Omit<PrincipalRecord, 'id'> {
  userId: string;
  sessionId: string;
  /** Names of the active global roles: the ones that govern this server. */
  roleNames: string[];
  /** Set when the access token was issued to an OAuth client. */
  clientId?: string;
  scope?: string;
  /** RFC 9449: the DPoP key the access token is bound to; such a token is accepted only with a proof of that key. */
  dpopJkt?: string;
}

export function toPrincipal(
  record: PrincipalRecord,
  token: { sid: string; client_id?: string; scope?: string; cnf?: { jkt: string } },
): Principal {
  return {
    userId: record.id,
    sessionId: token.sid,
    email: record.email,
    firstName: record.firstName,
    lastName: record.lastName,
    isActive: record.isActive,
    emailVerified: record.emailVerified,
    roles: record.roles,
    roleNames: globalRoleNames(record.roles),
    permissions: record.permissions,
    amr: record.amr,
    clientId: token.client_id,
    scope: token.scope,
    dpopJkt: token.cnf?.jkt,
  };
}

export function globalRoleNames(roles: PrincipalRole[]): string[] {
  return roles.filter((r) => r.application === null).map((r) => r.name);
}

export function fullName(firstName: string, lastName: string): string {
  return `${firstName} ${lastName}`.trim();
}

/** Highest admin-tier role held (super_admin > admin > manager), else "user" (CONTRACT §4). */
export function adminRoleOf(roleNames: string[]): string {
  return ADMIN_TIER.find((r) => roleNames.includes(r)) ?? 'user';
}

/**
 * CONTRACT §8: what an access token may see of its user. First-party tokens (no client) see everything; a token
 * issued to an OAuth client only what its granted scope names.
 */
export function scopeAllows(principal: Pick<Principal, 'clientId' | 'scope'>, scope: 'email' | 'profile' | 'read'): boolean {
  if (!principal.clientId) return true;
  return (principal.scope ?? '').split(' ').includes(scope);
}

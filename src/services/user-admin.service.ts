import { anyFactorRemoved, resetUserFactors } from './mfa/factor-reset.service';
import { countEventsPerDay } from '../db/repositories/audit-events.repo';
import { countUnusedRecoveryCodes } from '../db/repositories/mfa-recovery-codes.repo';
import { findTotp } from '../db/repositories/mfa-totp.repo';
import { findSessionById, listActiveSessionsOfUser, revokeSession, type SessionRow } from '../db/repositories/sessions.repo';
import { countUsersCapped, findUserById, searchUsers, type UserFilter, type UserRow } from '../db/repositories/users.repo';
import { estimateRowCount } from '../db/repositories/table-estimates.repo';
import { listPasskeysOfUser, type PasskeyRow } from '../db/repositories/webauthn-credentials.repo';
import { listActiveRolesOfUsers } from '../db/repositories/user-roles.repo';
import { forbidden, notFound } from '../errors';
import type { ServiceContext } from './context';
import { listOwnIdentities } from './federation/identities.service';
import type { LinkedIdentity } from '../db/repositories/user-identities.repo';
import { listConnectedApps } from './oauth/apps.service';
import type { GrantWithClientRow } from '../db/repositories/oauth-grants.repo';
import { sendSetPasswordEmail } from './email-links.service';
import { cappedCount, COUNT_CAP, unfilteredCount, type ListCount } from '../declarations/list-count';
import type { Actor } from './rbac-policy';
import { assertMayManageUser, assertMayTakeOverUser, type UserWithRoles } from './role-assignment.service';

/**
 * What the administration console (CONTRACT §14) needs about one account beyond the users API: its live sessions,
 * its second factors, and the actions on them. Every change goes through the §8 rules of rbac-policy.ts and emits
 * its audit event, as the API's changes do.
 */

export interface UsersPage {
  users: UserWithRoles[];
  /** Pass as `cursor` for the next (older) page; null on the last page. */
  nextCursor: string | null;
  /** Pass as `before` for the previous (newer) page; null on the first page. */
  prevCursor: string | null;
}

/**
 * The console's user list: search, status and admin-tier filters, newest first, `limit` a page, by keyset (the
 * cursors are user ids): after `cursor` (the next page), before `before` (the previous page), or from the top.
 */
export async function findUsers(
  ctx: ServiceContext,
  query: UserFilter & { cursor?: string; before?: string; limit: number },
): Promise<UsersPage> {
  const { cursor, before, limit, ...filter } = query;
  let rows: UserRow[];
  let nextCursor: string | null;
  let prevCursor: string | null;
  if (cursor === undefined && before !== undefined) {
    rows = await searchUsers(ctx.db, { ...filter, limit, beforeId: before });
    // Fewer than a page before the cursor: that is the first page.
    if (rows.length <= limit) return findUsers(ctx, { ...filter, limit });
    rows = rows.slice(1);
    nextCursor = rows[rows.length - 1].id;
    prevCursor = rows[0].id;
  } else {
    const found = await searchUsers(ctx.db, { ...filter, limit, afterId: cursor });
    rows = found.slice(0, limit);
    nextCursor = found.length > limit ? rows[rows.length - 1].id : null;
    prevCursor = cursor !== undefined && rows.length > 0 ? rows[0].id : null;
  }
  const roles = await listActiveRolesOfUsers(
    ctx.db,
    rows.map((u) => u.id),
  );
  return { users: rows.map((user) => ({ user, roles: roles.get(user.id) ?? [] })), nextCursor, prevCursor };
}

/** How many users the filters match: the table's estimate without a filter, else a count that stops at COUNT_CAP. */
export async function countFoundUsers(ctx: ServiceContext, filter: UserFilter): Promise<ListCount> {
  const count = async () => countUsersCapped(ctx.db, filter, COUNT_CAP);
  const unfiltered = !filter.search && !filter.status && !filter.holdingRoles?.length;
  return unfiltered ? unfilteredCount(() => estimateRowCount(ctx.db, 'users'), count) : cappedCount(await count());
}

/** 404 for an id that names no account: the reads about one user (its sessions, factors, apps, activity). */
export async function assertUserExists(ctx: ServiceContext, userId: string): Promise<void> {
  if (!(await findUserById(ctx.db, userId))) throw notFound('User');
}

export async function listSessionsOfUser(ctx: ServiceContext, userId: string): Promise<SessionRow[]> {
  await assertUserExists(ctx, userId);
  return listActiveSessionsOfUser(ctx.db, userId, ctx.clock.now());
}

/** The applications a user approved (their grants); 404 for an unknown user, as every read of a user's page. */
export async function listAppsOfUser(ctx: ServiceContext, userId: string): Promise<GrantWithClientRow[]> {
  await assertUserExists(ctx, userId);
  return listConnectedApps(ctx, userId);
}

/** The user's identities of other providers; 404 for an unknown user. */
export async function listIdentitiesOfUser(ctx: ServiceContext, userId: string): Promise<LinkedIdentity[]> {
  await assertUserExists(ctx, userId);
  return listOwnIdentities(ctx, userId);
}

/** An administrator ends one session of another account (the same rule as editing the account: §8 mayManageUser). */
export async function revokeSessionOfUser(ctx: ServiceContext, actor: Actor, userId: string, sessionId: string): Promise<void> {
  await assertMayManageUser(ctx.db, actor, userId);
  const session = await findSessionById(ctx.db, sessionId);
  if (!session || session.userId !== userId) throw notFound('Session');
  if (!(await revokeSession(ctx.db, sessionId, ctx.clock.now()))) throw notFound('Session');
  await ctx.events.record(ctx.db, {
    type: 'auth.session.revoked',
    actorId: actor.userId,
    subjectId: userId,
    detail: { session_id: sessionId, by_admin: true },
  });
}

export interface FactorsOfUser {
  totp: boolean;
  passkeys: PasskeyRow[];
  recoveryCodesLeft: number;
}

export async function listFactorsOfUser(ctx: ServiceContext, userId: string): Promise<FactorsOfUser> {
  await assertUserExists(ctx, userId);
  const [totp, passkeys, recoveryCodesLeft] = await Promise.all([
    findTotp(ctx.db, userId),
    listPasskeysOfUser(ctx.db, userId),
    countUnusedRecoveryCodes(ctx.db, userId),
  ]);
  return { totp: Boolean(totp?.confirmedAt), passkeys, recoveryCodesLeft };
}

/** The console's factor reset: the one rule of `DELETE /api/users/:userId/mfa` (services/mfa/factor-reset.service.ts). */
export async function resetFactorsOfUser(ctx: ServiceContext, actor: Actor, userId: string): Promise<{ removed: boolean }> {
  return { removed: anyFactorRemoved(await resetUserFactors(ctx, actor, userId)) };
}

/**
 * Mails the account a set-password link (the invitation's link, reason "reset"). Whoever reads that mailbox can
 * then choose the password, so it follows the take-over rule of §8, like changing the account's email.
 */
export async function sendPasswordLinkToUser(ctx: ServiceContext, actor: Actor, userId: string): Promise<void> {
  const user = await findUserById(ctx.db, userId);
  if (!user) throw notFound('User');
  if (!user.isActive) throw forbidden('Re-activate the account before sending it a link');
  if (userId !== actor.userId) await assertMayTakeOverUser(ctx.db, actor, userId, 'Sending a set-password link to this account');
  await sendSetPasswordEmail(ctx, user, 'reset');
  await ctx.events.record(ctx.db, { type: 'user.password_link_sent', actorId: actor.userId, subjectId: userId });
}

export interface DailySignIns {
  /** YYYY-MM-DD (UTC), oldest first, one per day. */
  day: string;
  succeeded: number;
  failed: number;
}

/** Sign-ins and failed sign-ins per UTC day over the last `days` days, from the audit trail. */
export async function signInsPerDay(ctx: ServiceContext, days = 30): Promise<DailySignIns[]> {
  const today = new Date(ctx.clock.now());
  today.setUTCHours(0, 0, 0, 0);
  const from = new Date(today.getTime() - (days - 1) * 86_400_000);
  const rows = await countEventsPerDay(ctx.db, ['auth.login.succeeded', 'auth.login.failed'], from);
  const out: DailySignIns[] = [];
  for (let i = 0; i < days; i++) {
    const day = new Date(from.getTime() + i * 86_400_000).toISOString().slice(0, 10);
    const of = (type: string) => rows.find((r) => r.day === day && r.type === type)?.count ?? 0;
    out.push({ day, succeeded: of('auth.login.succeeded'), failed: of('auth.login.failed') });
  }
  return out;
}

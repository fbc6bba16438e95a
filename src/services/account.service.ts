import { withTransaction } from '../db';
import { burnEmailTokensOfUser } from '../db/repositories/email-tokens.repo';
import { clearLoginFailures, countLoginAttempt } from '../db/repositories/login-failures.repo';
import {
  findSessionById,
  listActiveSessionsOfUser,
  revokeSession,
  revokeSessionsOfUser,
  type SessionRow,
} from '../db/repositories/sessions.repo';
import { findUserById, updateUser, type UserRow } from '../db/repositories/users.repo';
import { AppError, notFound } from '../errors';
import { LOGIN_THROTTLE, tooManyAttempts } from './auth.service';
import { SET_PASSWORD_PURPOSES } from './email-links.service';
import type { ServiceContext } from './context';
import type { Principal } from './principal';

/** GET /api/auth/sessions: the caller's active (unrevoked, unexpired) sessions, most recently used first. */
export async function listOwnSessions(ctx: ServiceContext, principal: Principal): Promise<SessionRow[]> {
  return listActiveSessionsOfUser(ctx.db, principal.userId, ctx.clock.now());
}

/** The caller's current session row as it is now (its amr may have grown since the request's token was issued). */
export async function findOwnSession(ctx: ServiceContext, principal: Principal): Promise<SessionRow | undefined> {
  const session = await findSessionById(ctx.db, principal.sessionId);
  return session?.userId === principal.userId ? session : undefined;
}

/** POST /api/auth/sessions/revoke-others (spec §3): every session but the current one. */
export async function revokeOtherSessions(ctx: ServiceContext, principal: Principal): Promise<number> {
  const count = await revokeSessionsOfUser(ctx.db, principal.userId, ctx.clock.now(), { exceptSessionId: principal.sessionId });
  ctx.events.emit({
    type: 'auth.session.revoked',
    actorId: principal.userId,
    subjectId: principal.userId,
    detail: { others: true, count },
  });
  return count;
}

/**
 * DELETE /api/auth/sessions/:sessionId: one of the caller's own active sessions. Another user's session and an
 * inactive one answer the same 404, so ids of other users cannot be probed. Returns whether it was the current.
 */
export async function revokeOwnSession(ctx: ServiceContext, principal: Principal, sessionId: string): Promise<{ current: boolean }> {
  const now = ctx.clock.now();
  const session = await findSessionById(ctx.db, sessionId);
  if (!session || session.userId !== principal.userId || session.revokedAt || session.expiresAt <= now) {
    throw notFound('Session');
  }
  if (!(await revokeSession(ctx.db, sessionId, now))) throw notFound('Session');
  ctx.events.emit({
    type: 'auth.session.revoked',
    actorId: principal.userId,
    subjectId: principal.userId,
    detail: { session_id: sessionId },
  });
  return { current: sessionId === principal.sessionId };
}

/**
 * The signed-in user's current password, checked under the same per-address throttle as login (CONTRACT §4: a
 * stolen session must not become an unlimited password oracle). Returns the user row; wrong: 401.
 */
export async function checkOwnPassword(ctx: ServiceContext, principal: Principal, password: string): Promise<UserRow> {
  const now = ctx.clock.now();
  const attempt = await countLoginAttempt(ctx.db, principal.email, now, LOGIN_THROTTLE);
  if (!attempt.allowed) throw tooManyAttempts(attempt.lockedUntil, now);
  const user = await findUserById(ctx.db, principal.userId);
  const ok = await ctx.passwords.verify(password, user?.passwordHash);
  if (!user || !ok) throw new AppError('invalid_credentials', 'Current password is incorrect');
  await clearLoginFailures(ctx.db, principal.email);
  return user;
}

/**
 * POST /api/auth/change-password (spec §3): checks the current password (checkOwnPassword), then sets the new one,
 * revokes every other session, keeps this one, and burns every outstanding link that could set a password
 * (SET_PASSWORD_PURPOSES: verification links too), so no link mailed before the change can undo it.
 */
export async function changePassword(
  ctx: ServiceContext,
  principal: Principal,
  input: { currentPassword: string; newPassword: string },
): Promise<void> {
  const user = await checkOwnPassword(ctx, principal, input.currentPassword);
  const passwordHash = await ctx.passwords.hash(input.newPassword);
  const changedAt = ctx.clock.now();
  await withTransaction(ctx.db, async (trx) => {
    // Lock order users -> email_tokens -> sessions (docs/security.md).
    await updateUser(trx, user.id, { passwordHash }, changedAt);
    await burnEmailTokensOfUser(trx, user.id, SET_PASSWORD_PURPOSES, changedAt);
    await revokeSessionsOfUser(trx, user.id, changedAt, { exceptSessionId: principal.sessionId });
  });
  ctx.events.emit({ type: 'auth.password.changed', actorId: user.id, subjectId: user.id });
}

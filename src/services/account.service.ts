import { findUserById } from '../db/repositories/users.repo';
import { withTransaction } from '../db';
import { burnEmailTokensOfUser } from '../db/repositories/email-tokens.repo';
import {
  findSessionById,
  listActiveSessionsOfUser,
  revokeSession,
  revokeSessionsOfUser,
  type SessionRow,
} from '../db/repositories/sessions.repo';
import { updateUser, type UserRow } from '../db/repositories/users.repo';
import { notFound } from '../errors';
import { SET_PASSWORD_PURPOSES } from './email-links.service';
import type { ServiceContext } from './context';
import { assertPasswordAllowed } from './password-policy';
import { verifyOwnPassword } from './mfa/reauthenticate.service';
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
  return withTransaction(ctx.db, async (trx) => {
    const count = await revokeSessionsOfUser(trx, principal.userId, ctx.clock.now(), { exceptSessionId: principal.sessionId });
    await ctx.events.record(trx, {
      type: 'auth.session.revoked',
      actorId: principal.userId,
      subjectId: principal.userId,
      detail: { others: true, count },
    });
    return count;
  });
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
  await withTransaction(ctx.db, async (trx) => {
    if (!(await revokeSession(trx, sessionId, now))) throw notFound('Session');
    await ctx.events.record(trx, {
      type: 'auth.session.revoked',
      actorId: principal.userId,
      subjectId: principal.userId,
      detail: { session_id: sessionId },
    });
  });
  return { current: sessionId === principal.sessionId };
}

/**
 * The signed-in user's current password, checked under the same per-address throttle as login (CONTRACT §4: a
 * stolen session must not become an unlimited password oracle) and audited when wrong. Returns the user row;
 * wrong: 403 reauthentication_failed (CONTRACT §11).
 */
export async function checkOwnPassword(ctx: ServiceContext, principal: Principal, password: string): Promise<UserRow> {
  return verifyOwnPassword(ctx, principal, password);
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
  await assertPasswordAllowed(ctx, input.newPassword, { email: user.email, field: 'new_password' });
  const passwordHash = await ctx.passwords.hash(input.newPassword);
  const changedAt = ctx.clock.now();
  await withTransaction(ctx.db, async (trx) => {
    // Lock order users -> email_tokens -> sessions (docs/security.md).
    await updateUser(trx, user.id, { passwordHash }, changedAt);
    await burnEmailTokensOfUser(trx, user.id, SET_PASSWORD_PURPOSES, changedAt);
    await revokeSessionsOfUser(trx, user.id, changedAt, { exceptSessionId: principal.sessionId });
    await ctx.events.record(trx, { type: 'auth.password.changed', actorId: user.id, subjectId: user.id });
  });
}

/** Whether the signed-in person has a password (someone signing in only by a linked account or a link has none). */
export async function hasOwnPassword(ctx: ServiceContext, principal: Principal): Promise<boolean> {
  return Boolean((await findUserById(ctx.db, principal.userId))?.passwordHash);
}

import { changedFields } from './events';
import { withTransaction, type DbOrTrx } from '../db';
import { mapDbError } from '../db/pg-errors';
import { burnEmailTokensOfUser } from '../db/repositories/email-tokens.repo';
import { loadUserAccess, type PrincipalRole } from '../db/repositories/principal.repo';
import { revokeSessionsOfUser } from '../db/repositories/sessions.repo';
import { listActiveRolesOfUsers } from '../db/repositories/user-roles.repo';
import {
  findUserById,
  insertUser,
  listUsers as listUserRows,
  lockUser,
  updateUser as updateUserRow,
  type UserFilter,
  type UserRow,
} from '../db/repositories/users.repo';
import { conflict, forbidden, notFound } from '../errors';
import { newAccount, normalizeEmail } from './auth.service';
import type { ServiceContext } from './context';
import { sendEmailChangedNotice, sendInvitationEmail } from './email-links.service';
import { addSeconds } from '../lib/clock';
import { hasPermission, isGlobalSuperAdmin, type Actor } from './rbac-policy';
import {
  assertMayManageUser,
  assertMayTakeOverUser,
  assertNotLastSuperAdmin,
  grantRolesOnCreate,
  type UserWithRoles,
} from './role-assignment.service';
import { say } from '../i18n';

const EMAIL_TAKEN = say('emailTaken');

export interface UserDetail {
  user: UserRow;
  roles: PrincipalRole[];
  permissions: string[];
}

export async function listUsers(
  ctx: ServiceContext,
  query: UserFilter & { page: number; limit: number },
): Promise<{ users: UserWithRoles[]; total: number }> {
  const { users, total } = await listUserRows(ctx.db, {
    search: query.search || undefined,
    status: query.status,
    holdingRoles: query.holdingRoles,
    limit: query.limit,
    offset: (query.page - 1) * query.limit,
  });
  const roles = await listActiveRolesOfUsers(
    ctx.db,
    users.map((u) => u.id),
  );
  return { users: users.map((user) => ({ user, roles: roles.get(user.id) ?? [] })), total };
}

export async function getUserDetail(ctx: ServiceContext, userId: string): Promise<UserDetail> {
  const user = await findUserById(ctx.db, userId);
  if (!user) throw notFound('User');
  return { user, ...(await loadUserAccess(ctx.db, userId)) };
}

/**
 * Admin invite (CONTRACT §6, beyond the spec): an unverified user without a password, who chooses one through
 * the set-password link mailed to them. Roles given here are granted under the same rules as the role endpoints,
 * so they also need users:manage_roles.
 */
export async function inviteUser(
  ctx: ServiceContext,
  actor: Actor,
  input: { email: string; firstName: string; lastName: string; roleIds?: string[] },
): Promise<UserDetail> {
  const roleIds = [...new Set(input.roleIds ?? [])];
  if (roleIds.length > 0 && !hasPermission(actor, 'users:manage_roles')) {
    throw forbidden('Assigning roles requires permission users:manage_roles');
  }
  const now = ctx.clock.now();
  const invitationExpiresAt = addSeconds(now, ctx.settings.current.values.invitation_ttl_hours * 3600);
  let user: UserRow;
  try {
    user = await withTransaction(ctx.db, async (trx) => {
      const created = await insertUser(trx, {
        ...newAccount(input),
        passwordHash: null,
        emailVerified: false,
        invitationExpiresAt,
        now,
      });
      await grantRolesOnCreate(trx, actor, created.id, roleIds, now);
      await ctx.events.record(trx, {
        type: 'user.created',
        actorId: actor.userId,
        subjectId: created.id,
        detail: { invited: true, role_ids: roleIds },
      });
      return created;
    });
  } catch (err) {
    throw mapDbError(err, EMAIL_TAKEN);
  }
  // After the commit: the link token is written outside the transaction (the embedded database has one connection).
  await sendInvitationEmail(ctx, user, invitationExpiresAt);
  return getUserDetail(ctx, user.id);
}

/**
 * Sends an invitation again (docs/rbac.md, "Invitations"): the earlier links stop working, the new one is valid
 * `invitation_ttl_hours` from now. Only while the invitation is pending (no password set yet): otherwise 409.
 */
export async function resendInvitation(ctx: ServiceContext, actor: Actor, userId: string): Promise<UserDetail> {
  const now = ctx.clock.now();
  const expiresAt = addSeconds(now, ctx.settings.current.values.invitation_ttl_hours * 3600);
  const user = await withTransaction(ctx.db, async (trx) => {
    const current = await lockUser(trx, userId);
    if (!current) throw notFound('User');
    if (!current.invitationExpiresAt || current.passwordHash !== null) {
      throw conflict(say('invitationNotPending'));
    }
    if (!current.isActive) throw conflict(say('accountDeactivated'));
    await burnEmailTokensOfUser(trx, userId, ['set_password'], now);
    const updated = await updateUserRow(trx, userId, { invitationExpiresAt: expiresAt }, now);
    await ctx.events.record(trx, {
      type: 'user.invitation_resent',
      actorId: actor.userId,
      subjectId: userId,
      detail: { expires_at: expiresAt.toISOString() },
    });
    // The row is locked above: it is there.
    if (!updated) throw notFound('User');
    return updated;
  });
  await sendInvitationEmail(ctx, user, expiresAt);
  return getUserDetail(ctx, userId);
}

/** The fields of an account that an administrator or a SCIM connection may change; absent means unchanged. */
export interface AccountPatch {
  firstName?: string;
  lastName?: string;
  email?: string;
  isActive?: boolean;
  emailVerified?: boolean;
}

/**
 * Admin update of a user. `is_active: false` is a deactivation (CONTRACT §6): it needs users:delete, is refused
 * on one's own account and on the last active super_admin (409), revokes every session of the user and burns
 * their email links. Re-activation also needs users:delete (CONTRACT §8). A new email, or a re-activation, of
 * another account needs strictly more rights than every role it holds; a new email burns every outstanding link
 * and tells the old address.
 */
export async function updateUser(ctx: ServiceContext, actor: Actor, userId: string, patch: AccountPatch): Promise<UserDetail> {
  const deactivate = patch.isActive === false;
  if (patch.isActive !== undefined && !hasPermission(actor, 'users:delete')) {
    throw forbidden(`${deactivate ? 'Deactivating' : 'Re-activating'} a user requires permission users:delete`);
  }
  const now = ctx.clock.now();
  let emailChange: { from: UserRow; to: string } | undefined;
  let reactivated = false;
  try {
    await withTransaction(ctx.db, async (trx) => {
      const user = await findUserById(trx, userId);
      if (!user) throw notFound('User');
      const access = await assertMayManageUser(trx, actor, userId);
      const newEmail = patch.email === undefined ? undefined : normalizeEmail(patch.email);
      emailChange = newEmail !== undefined && newEmail !== user.email ? { from: user, to: newEmail } : undefined;
      reactivated = patch.isActive === true && !user.isActive;
      if (userId !== actor.userId && (emailChange || reactivated)) {
        await assertMayTakeOverUser(trx, actor, userId, emailChange ? 'Changing the email of this account' : 'Re-activating this account');
      }
      if (deactivate) {
        if (userId === actor.userId) throw conflict(say('deactivateSelf'));
        if (user.isActive && access.roles.some(isGlobalSuperAdmin)) {
          await assertNotLastSuperAdmin(trx, userId, 'Deactivating this user');
        }
      }
      const fields = changedFields(patch);
      await applyAccountChange(ctx, trx, user, { ...patch, email: newEmail }, now, { actorId: actor.userId, fields });
    });
  } catch (err) {
    throw mapDbError(err, EMAIL_TAKEN);
  }
  if (emailChange) sendEmailChangedNotice(ctx, emailChange.from, emailChange.to);
  return getUserDetail(ctx, userId);
}

/**
 * The one path of an account change, in the caller's transaction after its own checks (the admin API's rights, or a
 * SCIM connection's rule, CONTRACT §20): writes the row; an email change or a deactivation burns the account's
 * outstanding email links (a link mailed to the old address must not set a password on the account now at the new
 * one; a deactivated account's links must not outlive it); a deactivation revokes every session of the account, and
 * with them every token (CONTRACT §3: access tokens are checked against their live session). Records
 * `auth.email.changed`, `user.deactivated`, `user.activated` and `user.changed` (with the changed `fields`).
 * `actorId` undefined: the caller of the request (a user, or a SCIM connection).
 */
export async function applyAccountChange(
  ctx: ServiceContext,
  trx: DbOrTrx,
  user: UserRow,
  patch: AccountPatch,
  now: Date,
  audit: { actorId?: string; fields: string[] },
): Promise<void> {
  const userId = user.id;
  const emailChange = patch.email !== undefined && patch.email !== user.email;
  const reactivated = patch.isActive === true && !user.isActive;
  const actor = audit.actorId !== undefined ? { actorId: audit.actorId } : {};
  await updateUserRow(
    trx,
    userId,
    {
      firstName: patch.firstName?.trim(),
      lastName: patch.lastName?.trim(),
      email: patch.email,
      isActive: patch.isActive,
      emailVerified: patch.emailVerified,
    },
    now,
  );
  // Lock order users -> email_tokens -> sessions (docs/security.md).
  if (emailChange || patch.isActive === false) await burnEmailTokensOfUser(trx, userId, ['verify_email', 'set_password'], now);
  if (patch.isActive === false) await revokeSessionsOfUser(trx, userId, now);
  if (emailChange) await ctx.events.record(trx, { type: 'auth.email.changed', ...actor, subjectId: userId });
  if (patch.isActive === false) await ctx.events.record(trx, { type: 'user.deactivated', ...actor, subjectId: userId });
  if (reactivated) await ctx.events.record(trx, { type: 'user.activated', ...actor, subjectId: userId });
  await ctx.events.record(trx, { type: 'user.changed', ...actor, subjectId: userId, detail: { fields: audit.fields } });
}

/** Deactivates, never deletes (spec §3): the row stays, every session is revoked. */
export async function deactivateUser(ctx: ServiceContext, actor: Actor, userId: string): Promise<UserDetail> {
  return updateUser(ctx, actor, userId, { isActive: false });
}

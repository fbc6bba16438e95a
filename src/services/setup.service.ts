import { withTransaction } from '../db';
import { isUniqueViolation } from '../db/pg-errors';
import { lockSuperAdminRole } from '../db/repositories/roles.repo';
import { deleteSetupToken, ensureSetupToken, findSetupToken } from '../db/repositories/setup-token.repo';
import { countUsersWithGlobalRoles } from '../db/repositories/user-roles.repo';
import { findUserByEmail, insertUser } from '../db/repositories/users.repo';
import { conflict } from '../errors';
import { randomToken, safeEqual } from '../lib/crypto';
import { grantSuperAdmin } from './bootstrap.service';
import { newPasswordAccount } from './auth.service';
import type { ServiceContext } from './context';
import { say } from '../i18n';

/**
 * First-run setup (issue 13): while no super_admin exists, a one-time link `{BASE_URL}/setup?token=…` creates the
 * first one. The token is random (256 bits), kept sealed (KEYS_SECRET) in the one-row setup_token table so that
 * every instance logs the same link, and valid until an admin exists: completing the form deletes it, and an
 * admin created any other way (CLI, BOOTSTRAP_ADMIN_*) makes it dead too.
 */
const PURPOSE = 'setup-token';
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export class SetupLinkInvalid extends Error {
  override name = 'SetupLinkInvalid';
}

async function superAdminExists(ctx: ServiceContext): Promise<boolean> {
  return (await countUsersWithGlobalRoles(ctx.db, ['super_admin'])) > 0;
}

/** The setup link to log, or undefined when a super_admin exists (then any stored token is dropped). */
export async function ensureSetupLink(ctx: ServiceContext): Promise<string | undefined> {
  if (await superAdminExists(ctx)) {
    await deleteSetupToken(ctx.db);
    return undefined;
  }
  const fresh = ctx.sealer.seal(randomToken(32), PURPOSE);
  let token: string;
  try {
    token = ctx.sealer.open(await ensureSetupToken(ctx.db, fresh, ctx.clock.now()), PURPOSE);
  } catch {
    // Sealed under another KEYS_SECRET: replace it.
    await deleteSetupToken(ctx.db);
    token = ctx.sealer.open(await ensureSetupToken(ctx.db, fresh, ctx.clock.now()), PURPOSE);
  }
  return `${ctx.config.baseUrl}/setup?token=${token}`;
}

/** Whether `token` is the live setup token (the page shows the form only then). */
export async function isSetupTokenValid(ctx: ServiceContext, token: string): Promise<boolean> {
  if (!TOKEN_SHAPE.test(token)) return false;
  const sealed = await findSetupToken(ctx.db);
  if (!sealed || (await superAdminExists(ctx))) return false;
  return matches(ctx, sealed, token);
}

function matches(ctx: ServiceContext, sealed: string, token: string): boolean {
  try {
    return safeEqual(ctx.sealer.open(sealed, PURPOSE), token);
  } catch {
    return false;
  }
}

/**
 * Creates the first super_admin (verified, active) and kills the link, in one transaction that locks the token
 * row and the super_admin role first: of two concurrent submissions the second waits, then finds no token and no
 * longer an empty admin list. Throws SetupLinkInvalid when the link is dead, conflict when the email is taken.
 */
export async function completeSetup(
  ctx: ServiceContext,
  token: string,
  input: { email: string; firstName: string; lastName: string; password: string },
): Promise<{ userId: string; email: string }> {
  if (!(await isSetupTokenValid(ctx, token))) throw new SetupLinkInvalid('setup link is not valid');
  const account = await newPasswordAccount(ctx, input);
  const { email } = account;
  const now = ctx.clock.now();
  let userId: string;
  try {
    userId = await withTransaction(ctx.db, async (trx) => {
      const sealed = await findSetupToken(trx, { forUpdate: true });
      await lockSuperAdminRole(trx);
      if (!sealed || !matches(ctx, sealed, token)) throw new SetupLinkInvalid('setup link is not valid');
      if ((await countUsersWithGlobalRoles(trx, ['super_admin'])) > 0) throw new SetupLinkInvalid('an administrator exists');
      if (await findUserByEmail(trx, email)) throw conflict(say('emailTaken'));
      const user = await insertUser(trx, { ...account, emailVerified: true, now });
      await grantSuperAdmin(trx, user.id, now);
      await deleteSetupToken(trx);
      await ctx.events.record(trx, { type: 'user.created', actorId: null, subjectId: user.id, detail: { via: 'setup' } });
      await ctx.events.record(trx, {
        type: 'role.assigned',
        actorId: null,
        subjectId: user.id,
        detail: { role: 'super_admin', via: 'setup' },
      });
      return user.id;
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(say('emailTaken'));
    throw err;
  }
  ctx.logger.info({ userId }, 'first super_admin created through /setup; the setup link is no longer valid');
  return { userId, email };
}

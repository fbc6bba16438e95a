import { randomUUID } from 'node:crypto';
import { withTransaction } from '../db';
import { isUniqueViolation } from '../db/pg-errors';
import { countLoginAttempt, releaseLoginAttempt } from '../db/repositories/login-failures.repo';
import { revokeSession } from '../db/repositories/sessions.repo';
import { findSignInAccount, insertUser, updateUser, type UserRow } from '../db/repositories/users.repo';
import { AppError, conflict, unauthorized } from '../errors';
import type { RequestMeta, ServiceContext } from './context';
import { sendVerificationEmail } from './email-links.service';
import type { Principal } from './principal';
import { signInMethods, type SecondFactorMethod } from './mfa/factors.service';
import { startSecondStep } from './mfa/mfa-token';
import { assertPasswordAllowed } from './password-policy';
import { isOwnHash, schemeOf } from '../lib/imported-hashes';

/** Replaces an imported hash, verified a moment ago, with bcrypt (audited; the policy does not apply to it). */
async function rehashImportedPassword(ctx: ServiceContext, user: UserRow, importedHash: string, password: string): Promise<void> {
  const scheme = schemeOf(importedHash) ?? 'unknown';
  const passwordHash = await ctx.passwords.hash(password);
  await withTransaction(ctx.db, async (trx) => {
    await updateUser(trx, user.id, { passwordHash }, ctx.clock.now());
    await ctx.events.record(trx, {
      type: 'auth.password.changed',
      actorId: user.id,
      subjectId: user.id,
      detail: { via: 'rehash', scheme },
    });
  });
}
import { rotateRefreshToken, completeSignIn, startSession, type IssuedTokens } from './sessions.service';
import { say } from '../i18n';

/** CONTRACT §4: 10 consecutive failures lock an address for 1 minute, doubling per failure up to 15 minutes. */
export const LOGIN_THROTTLE = { threshold: 10, baseLockSeconds: 60, maxLockSeconds: 900 } as const;

/** Emails are trimmed and compared case-insensitively (CONTRACT §4). */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** A new account as a person or an administrator gave it: a fresh id, the address normalized, the names trimmed. */
export function newAccount(input: { email: string; firstName: string; lastName: string }) {
  return { id: randomUUID(), email: normalizeEmail(input.email), firstName: input.firstName.trim(), lastName: input.lastName.trim() };
}

/** A new account with the password its person chose: allowed by the password policy, and hashed. */
export async function newPasswordAccount(
  ctx: ServiceContext,
  input: { email: string; firstName: string; lastName: string; password: string },
) {
  const account = newAccount(input);
  await assertPasswordAllowed(ctx, input.password, { email: account.email });
  return { ...account, passwordHash: await ctx.passwords.hash(input.password) };
}

/** 429 too_many_attempts with Retry-After until the address's lock ends (CONTRACT §4). */
export function tooManyAttempts(lockedUntil: Date, now: Date): AppError {
  const retryAfter = Math.max(1, Math.ceil((lockedUntil.getTime() - now.getTime()) / 1000));
  return new AppError('too_many_attempts', 'Too many failed sign-in attempts for this address, try again later', {
    headers: { 'Retry-After': String(retryAfter) },
  });
}

export interface AuthResult {
  user: UserRow;
  tokens: IssuedTokens;
  mfaRequired?: undefined;
}

/** A correct password for an account with a second factor: no session yet, only the token of the second step. */
export interface SecondFactorRequired {
  mfaRequired: true;
  mfaToken: string;
  methods: SecondFactorMethod[];
}

/** CONTRACT §15: whether people may sign up themselves (REGISTRATION=open). */
export function registrationOpen(settings: { registration: 'open' | 'closed' }): boolean {
  return settings.registration === 'open';
}

export async function register(
  ctx: ServiceContext,
  input: { firstName: string; lastName: string; email: string; password: string },
  meta: RequestMeta,
): Promise<AuthResult> {
  // CONTRACT §15: the one place the switch is enforced (the API and the /register page both come here).
  if (!registrationOpen(ctx.settings.current.values))
    throw new AppError('registration_closed', 'Registration is closed: ask an administrator for an invitation');
  const account = await newPasswordAccount(ctx, input);
  const now = ctx.clock.now();
  try {
    const result = await withTransaction(ctx.db, async (trx) => {
      const user = await insertUser(trx, { ...account, now });
      const tokens = await startSession(ctx, trx, { user, meta });
      // Every way an account comes to exist records user.created (webhook subscribers provision on it).
      await ctx.events.record(trx, { type: 'user.created', actorId: user.id, subjectId: user.id, detail: { via: 'registration' } });
      await ctx.events.record(trx, {
        type: 'auth.register',
        actorId: user.id,
        subjectId: user.id,
        detail: { session_id: tokens.sessionId },
      });
      return { user, tokens };
    });
    await sendVerificationEmail(ctx, result.user);
    return result;
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(say('emailTaken'));
    throw err;
  }
}

/**
 * Unknown email, wrong password and inactive user answer the same 401 after the same bcrypt work
 * (CONTRACT §4). The attempt is counted before the password is compared.
 */
export async function login(
  ctx: ServiceContext,
  input: { email: string; password: string },
  meta: RequestMeta,
): Promise<AuthResult | SecondFactorRequired> {
  const email = normalizeEmail(input.email);
  const now = ctx.clock.now();
  const attempt = await countLoginAttempt(ctx.db, email, now, LOGIN_THROTTLE);
  if (!attempt.allowed) {
    await ctx.events.record(ctx.db, { type: 'auth.login.throttled', actorId: null, detail: { email } });
    throw tooManyAttempts(attempt.lockedUntil, now);
  }
  const account = await findSignInAccount(ctx.db, email);
  const passwordOk = await ctx.passwords.verify(input.password, account?.user.passwordHash);
  if (!account || !passwordOk || !account.user.isActive) {
    const reason = !account ? 'unknown_email' : !passwordOk ? 'bad_password' : 'inactive';
    const subjectId = account?.user.id ?? null;
    await ctx.events.record(ctx.db, { type: 'auth.login.failed', actorId: null, subjectId, detail: { email, reason } });
    if (attempt.failures >= LOGIN_THROTTLE.threshold) {
      await ctx.events.record(ctx.db, { type: 'auth.login.locked', actorId: null, subjectId, detail: { email } });
    }
    throw new AppError('invalid_credentials', 'Invalid email or password');
  }
  const { user } = account;
  // An imported password (docs/passwords.md) was just verified in its own scheme: it is replaced by this server's bcrypt.
  if (user.passwordHash && !isOwnHash(user.passwordHash)) await rehashImportedPassword(ctx, user, user.passwordHash, input.password);
  // CONTRACT §10: with a second factor the password only earns an mfa_token. The failures are cleared by the
  // completed sign-in, not here, so wrong codes keep adding to them.
  const methods = signInMethods(account);
  if (methods.length > 0) {
    await releaseLoginAttempt(ctx.db, email);
    const mfaToken = await startSecondStep(ctx, user.id, meta, { methods });
    return { mfaRequired: true, mfaToken, methods };
  }
  // One statement: failures cleared, last_login_at, the session and its refresh token, the user's roles.
  // The sign-in is one statement (no transaction): its event is written right after it.
  const tokens = await completeSignIn(ctx, ctx.db, { user, meta, clearFailuresOf: email });
  return { user: { ...user, lastLoginAt: now }, tokens };
}

/** First-party refresh (POST /api/auth/refresh-token): any failure is a plain 401. */
export async function refresh(ctx: ServiceContext, refreshToken: string | undefined, meta: RequestMeta): Promise<IssuedTokens> {
  if (!refreshToken) throw unauthorized('Refresh token required');
  const result = await rotateRefreshToken(ctx, refreshToken, null, meta);
  if (!result.ok) throw unauthorized('Invalid or expired refresh token');
  return result.tokens;
}

export async function logout(ctx: ServiceContext, sessionId: string): Promise<void> {
  await withTransaction(ctx.db, async (trx) => {
    await revokeSession(trx, sessionId, ctx.clock.now());
    await ctx.events.record(trx, { type: 'auth.logout', detail: { session_id: sessionId } });
  });
}

export async function updateProfile(
  ctx: ServiceContext,
  principal: Principal,
  patch: { firstName?: string; lastName?: string },
): Promise<Principal> {
  const updated = await updateUser(
    ctx.db,
    principal.userId,
    { firstName: patch.firstName?.trim(), lastName: patch.lastName?.trim() },
    ctx.clock.now(),
  );
  if (!updated) throw unauthorized();
  return { ...principal, firstName: updated.firstName, lastName: updated.lastName };
}

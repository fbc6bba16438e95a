import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import { clearLoginFailures, countLoginAttempt } from '../../db/repositories/login-failures.repo';
import { findSessionById, recordSessionReauthentication } from '../../db/repositories/sessions.repo';
import { findUserById, type UserRow } from '../../db/repositories/users.repo';
import { AppError, unauthorized } from '../../errors';
import { LOGIN_THROTTLE, tooManyAttempts } from '../auth.service';
import type { RequestMeta, ServiceContext } from '../context';
import type { Principal } from '../principal';
import { hasAnyFactor, type Factors } from './factors.service';
import { useRecoveryCode, verifyPasskeyAssertion, verifyTotpCode } from './factor-checks';
import { AMR, hasSecondFactor } from './policy';
import { factorChangeVerdict, type ProofKind } from './reauth-policy';

/**
 * What a signed-in caller may send to prove it is still the account's owner (docs/mfa.md "Re-authentication"), the
 * same fields on every endpoint and page that takes one: `password` (the current password), `code` (a code of the
 * account's authenticator app), `recovery_code`, or `passkey` (an assertion made with options from
 * POST /api/auth/passkeys/login/options). At most one per request.
 */
export type ReauthProof =
  | { method: 'password'; password: string }
  | { method: 'totp'; code: string }
  | { method: 'recovery_code'; recoveryCode: string }
  | { method: 'passkey'; passkey: AuthenticationResponseJSON };

type ProofMethod = ReauthProof['method'];

const WRONG: Record<ProofMethod, string> = {
  password: 'Current password is incorrect',
  totp: 'The code is not valid',
  recovery_code: 'The recovery code is not valid',
  passkey: 'The passkey could not be verified',
};

const AMR_OF: Record<ProofMethod, string> = {
  password: AMR.password,
  totp: AMR.totp,
  recovery_code: AMR.recoveryCode,
  passkey: AMR.passkey,
};

/**
 * Counts one guess of a signed-in caller on the account's address, the sign-in throttle of CONTRACT §4, before the
 * guess is checked: a stolen session must not be an unlimited oracle for the password or a code. Locked: 429.
 */
async function countGuess(ctx: ServiceContext, principal: Principal, method: string): Promise<number> {
  const now = ctx.clock.now();
  const attempt = await countLoginAttempt(ctx.db, principal.email, now, LOGIN_THROTTLE);
  if (!attempt.allowed) {
    await ctx.events.record(ctx.db, {
      type: 'auth.login.throttled',
      actorId: principal.userId,
      subjectId: principal.userId,
      detail: { step: 'reauthentication', method },
    });
    throw tooManyAttempts(attempt.lockedUntil, now);
  }
  return attempt.failures;
}

/**
 * A wrong password or code from a signed-in caller (CONTRACT §11): audited, and 403 `reauthentication_failed` (a 401
 * would tell the client to refresh its token and retry, spec §7). The guess was already counted by countGuess.
 */
export async function refuseGuess(
  ctx: ServiceContext,
  principal: Principal,
  method: string,
  failures: number,
  message: string,
  meta?: RequestMeta,
): Promise<never> {
  const who = {
    actorId: principal.userId,
    subjectId: principal.userId,
    ip: meta?.ip ?? undefined,
    userAgent: meta?.userAgent ?? undefined,
  };
  await ctx.events.record(ctx.db, { type: 'auth.reauthentication.failed', ...who, detail: { method } });
  if (failures >= LOGIN_THROTTLE.threshold) {
    await ctx.events.record(ctx.db, { type: 'auth.login.locked', ...who, detail: { step: 'reauthentication' } });
  }
  throw new AppError('reauthentication_failed', message);
}

/**
 * Checks a code the caller typed for something else than re-authentication (the first code of a pending TOTP) under
 * the same rule: counted on the throttle before `check` runs, a wrong one audited and refused with 403.
 */
export async function guardedCheck(
  ctx: ServiceContext,
  principal: Principal,
  method: string,
  check: () => Promise<boolean>,
  meta?: RequestMeta,
): Promise<void> {
  const failures = await countGuess(ctx, principal, method);
  if (!(await check())) await refuseGuess(ctx, principal, method, failures, WRONG.totp, meta);
  await clearLoginFailures(ctx.db, principal.email);
}

/**
 * Verifies the proof a signed-in caller sent (none is fine: the caller decides whether one was needed). Every guess
 * counts on the sign-in throttle and a wrong one is audited and refused (refuseGuess). A right one makes the
 * session's sign-in recent again (auth_time = now, the method added to its amr) and resets the throttle, as a
 * successful sign-in does. Returns what was proved; `verifyOwnPassword` below also answers the user row.
 */
export async function verifyReauthProof(
  ctx: ServiceContext,
  principal: Principal,
  proof: ReauthProof | undefined,
  meta?: RequestMeta,
): Promise<{ kind: ProofKind }> {
  if (!proof) return { kind: 'none' };
  if (proof.method === 'password') {
    await verifyOwnPassword(ctx, principal, proof.password, meta);
    return { kind: 'password' };
  }
  const failures = await countGuess(ctx, principal, proof.method);
  const held = await proofHolds(ctx, principal, proof, meta);
  if (!held.ok) return refuseGuess(ctx, principal, proof.method, failures, WRONG[proof.method], meta);
  await provedNow(ctx, principal, proof.method);
  await held.afterCommit?.();
  return { kind: 'factor' };
}

/**
 * The caller's current password as a proof (verifyReauthProof's password branch): counted, checked, a wrong one
 * refused; answers the user row it was checked against (the password change goes on with it).
 */
export async function verifyOwnPassword(ctx: ServiceContext, principal: Principal, password: string, meta?: RequestMeta): Promise<UserRow> {
  const failures = await countGuess(ctx, principal, 'password');
  const user = await findUserById(ctx.db, principal.userId);
  const ok = (await ctx.passwords.verify(password, user?.passwordHash)) && user !== undefined;
  if (!ok || !user) return refuseGuess(ctx, principal, 'password', failures, WRONG.password, meta);
  await provedNow(ctx, principal, 'password');
  return user;
}

/** Whether a second-factor proof holds; a recovery code also says what to run once the proof is recorded (its mail). */
async function proofHolds(
  ctx: ServiceContext,
  principal: Principal,
  proof: Exclude<ReauthProof, { method: 'password' }>,
  meta: RequestMeta | undefined,
): Promise<{ ok: boolean; afterCommit?: () => Promise<void> }> {
  switch (proof.method) {
    case 'totp':
      return { ok: await verifyTotpCode(ctx, ctx.db, principal.userId, proof.code) };
    case 'recovery_code':
      return useRecoveryCode(ctx, ctx.db, principal.userId, proof.recoveryCode, meta);
    case 'passkey': {
      // Options from POST /api/auth/passkeys/login/options (a challenge of no account); the credential must be ours.
      const passkey = await verifyPasskeyAssertion(ctx, ctx.db, proof.passkey, { userId: null });
      return { ok: passkey?.userId === principal.userId };
    }
  }
}

/** A right proof: the throttle is reset and the session's sign-in is recent again, the method added to its amr. */
async function provedNow(ctx: ServiceContext, principal: Principal, method: ProofMethod): Promise<void> {
  await clearLoginFailures(ctx.db, principal.email);
  await recordSessionReauthentication(ctx.db, principal.sessionId, AMR_OF[method], ctx.clock.now());
}

/**
 * CONTRACT §11 "Changing factors needs a recent sign-in": verifies the request's proof, then asks factorChangeVerdict
 * (reauth-policy.ts) with the session as it is now. Refusals are 403 `reauthentication_required` or `mfa_required`.
 */
export async function requireFactorChangeAllowed(
  ctx: ServiceContext,
  principal: Principal,
  proof: ReauthProof | undefined,
  factors: Factors,
  options: { proofRequired?: boolean; meta?: RequestMeta } = {},
): Promise<{ kind: ProofKind }> {
  const proved = await verifyReauthProof(ctx, principal, proof, options.meta);
  const session = await findSessionById(ctx.db, principal.sessionId);
  if (!session || session.userId !== principal.userId) throw unauthorized();
  const verdict = factorChangeVerdict({
    authAgeSeconds: (ctx.clock.now().getTime() - session.authTime.getTime()) / 1000,
    sessionHasSecondFactor: hasSecondFactor(session.amr),
    accountHasFactor: hasAnyFactor(factors),
    proof: proved.kind,
    proofRequired: options.proofRequired,
  });
  if (!verdict.allowed) throw new AppError(verdict.code, verdict.reason, { status: 403 });
  return proved;
}

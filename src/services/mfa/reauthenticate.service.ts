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
export interface ReauthProof {
  password?: string;
  code?: string;
  recoveryCode?: string;
  passkey?: AuthenticationResponseJSON;
}

type ProofMethod = 'password' | 'totp' | 'recovery_code' | 'passkey';

function methodOf(proof: ReauthProof): ProofMethod | undefined {
  if (proof.password !== undefined) return 'password';
  if (proof.code !== undefined) return 'totp';
  if (proof.recoveryCode !== undefined) return 'recovery_code';
  if (proof.passkey !== undefined) return 'passkey';
  return undefined;
}

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
 * successful sign-in does. Returns what was proved, and for the password the user row it was checked against.
 */
export async function verifyReauthProof(
  ctx: ServiceContext,
  principal: Principal,
  proof: ReauthProof,
  meta?: RequestMeta,
): Promise<{ kind: ProofKind; user?: UserRow }> {
  const method = methodOf(proof);
  if (!method) return { kind: 'none' };
  const failures = await countGuess(ctx, principal, method);
  let ok = false;
  let user: UserRow | undefined;
  let afterCommit: (() => Promise<void>) | undefined;
  switch (method) {
    case 'password':
      user = await findUserById(ctx.db, principal.userId);
      ok = (await ctx.passwords.verify(proof.password!, user?.passwordHash)) && user !== undefined;
      break;
    case 'totp':
      ok = await verifyTotpCode(ctx, ctx.db, principal.userId, proof.code!);
      break;
    case 'recovery_code': {
      const used = await useRecoveryCode(ctx, ctx.db, principal.userId, proof.recoveryCode!, meta);
      if (used.ok) [ok, afterCommit] = [true, used.afterCommit];
      break;
    }
    case 'passkey': {
      // Options from POST /api/auth/passkeys/login/options (a challenge of no account); the credential must be ours.
      const passkey = await verifyPasskeyAssertion(ctx, ctx.db, proof.passkey!, { userId: null });
      ok = passkey?.userId === principal.userId;
      break;
    }
  }
  if (!ok) await refuseGuess(ctx, principal, method, failures, WRONG[method], meta);
  await clearLoginFailures(ctx.db, principal.email);
  await recordSessionReauthentication(ctx.db, principal.sessionId, AMR_OF[method], ctx.clock.now());
  await afterCommit?.();
  return { kind: method === 'password' ? 'password' : 'factor', user };
}

/**
 * CONTRACT §11 "Changing factors needs a recent sign-in": verifies the request's proof, then asks factorChangeVerdict
 * (reauth-policy.ts) with the session as it is now. Refusals are 403 `reauthentication_required` or `mfa_required`.
 */
export async function requireFactorChangeAllowed(
  ctx: ServiceContext,
  principal: Principal,
  proof: ReauthProof,
  factors: Factors,
  options: { proofRequired?: boolean; meta?: RequestMeta } = {},
): Promise<{ kind: ProofKind; user?: UserRow }> {
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

import type { AuthenticationResponseJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import { withTransaction } from '../../db';
import { clearLoginFailures, countLoginAttempt } from '../../db/repositories/login-failures.repo';
import { consumeMfaToken, countMfaTokenFailure, findLiveMfaToken } from '../../db/repositories/mfa-tokens.repo';
import { findPasskeyByCredentialId, listPasskeysOfUser } from '../../db/repositories/webauthn-credentials.repo';
import { findUserById, type UserRow } from '../../db/repositories/users.repo';
import { AppError, badRequest } from '../../errors';
import { LOGIN_THROTTLE, tooManyAttempts, type AuthResult } from '../auth.service';
import type { RequestMeta, ServiceContext } from '../context';
import { completeSignIn } from '../sessions.service';
import { loadFactors, methodsOf, type SecondFactorMethod } from './factors.service';
import { hashMfaToken, MFA_TOKEN_MAX_FAILURES } from './mfa-token';
import { passkeyAssertionOptions } from './passkeys.service';
import { useRecoveryCode, verifyPasskeyAssertion, verifyTotpCode } from './factor-checks';
import { AMR } from './policy';

export type SecondFactorProof =
  | { code: string; recovery_code?: undefined; passkey?: undefined }
  | { recovery_code: string; code?: undefined; passkey?: undefined }
  | { passkey: AuthenticationResponseJSON; code?: undefined; recovery_code?: undefined };

const expiredStep = () => new AppError('unauthorized', 'This sign-in step has expired or was already used; sign in again');

/** The live mfa_token's user, or 401. */
async function userOfMfaToken(ctx: ServiceContext, mfaToken: string): Promise<UserRow> {
  return (await liveMfaStep(ctx, mfaToken)).user;
}

/** The live mfa_token's user and how the first step was made ('pwd', or 'fed' after an upstream sign-in), or 401. */
async function liveMfaStep(ctx: ServiceContext, mfaToken: string): Promise<{ user: UserRow; firstFactor: string }> {
  const token = await findLiveMfaToken(ctx.db, hashMfaToken(mfaToken), ctx.clock.now(), MFA_TOKEN_MAX_FAILURES);
  const user = token ? await findUserById(ctx.db, token.userId) : undefined;
  if (!token || !user?.isActive) throw expiredStep();
  return { user, firstFactor: token.firstFactor };
}

/** The methods still open to a live mfa_token (the hosted second step shows them again after a wrong code). */
export async function methodsOfMfaToken(ctx: ServiceContext, mfaToken: string): Promise<SecondFactorMethod[] | undefined> {
  try {
    const user = await userOfMfaToken(ctx, mfaToken);
    return methodsOf(await loadFactors(ctx.db, user.id));
  } catch (err) {
    if (err instanceof AppError && err.code === 'unauthorized') return undefined;
    throw err;
  }
}

/** POST /api/auth/login/mfa/passkey-options { mfa_token }: assertion options limited to that account's passkeys. */
export async function passkeyOptionsForMfaToken(ctx: ServiceContext, mfaToken: string): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const user = await userOfMfaToken(ctx, mfaToken);
  if ((await listPasskeysOfUser(ctx.db, user.id)).length === 0) throw badRequest('This account has no passkey');
  return passkeyAssertionOptions(ctx, user.id);
}

class StepAlreadyUsed extends Error {}

/**
 * POST /api/auth/login/mfa: the second step of a password sign-in (CONTRACT §10). Each attempt is counted on the
 * account's address before the proof is checked, like a password (§4), so wrong codes feed the same throttle; a
 * wrong proof also counts against the mfa_token, which dies at the fifth. The proof is checked, the token burnt
 * and the session started in one transaction: a code, recovery code or token is only ever spent by a sign-in
 * that happened.
 */
export async function completeSecondFactor(
  ctx: ServiceContext,
  input: { mfa_token: string } & SecondFactorProof,
  meta: RequestMeta,
): Promise<AuthResult> {
  const { user, firstFactor } = await liveMfaStep(ctx, input.mfa_token);
  const tokenHash = hashMfaToken(input.mfa_token);
  const now = ctx.clock.now();
  const attempt = await countLoginAttempt(ctx.db, user.email, now, LOGIN_THROTTLE);
  if (!attempt.allowed) {
    // The password step's rule (auth.service.ts): a refused attempt while locked is audited as throttled.
    await ctx.events.record(ctx.db, {
      type: 'auth.login.throttled',
      actorId: null,
      subjectId: user.id,
      ip: meta.ip,
      userAgent: meta.userAgent,
      detail: { step: 'second_factor' },
    });
    throw tooManyAttempts(attempt.lockedUntil, now);
  }

  let outcome;
  try {
    outcome = await withTransaction(ctx.db, async (trx) => {
      let method: string | undefined;
      let afterCommit: (() => Promise<void>) | undefined;
      if (input.code !== undefined) {
        if (await verifyTotpCode(ctx, trx, user.id, input.code)) method = AMR.totp;
      } else if (input.recovery_code !== undefined) {
        const used = await useRecoveryCode(ctx, trx, user.id, input.recovery_code, meta);
        if (used.ok) [method, afterCommit] = [AMR.recoveryCode, used.afterCommit];
      } else if (await verifyPasskeyAssertion(ctx, trx, input.passkey, { userId: user.id })) {
        method = AMR.passkey;
      }
      if (!method) return undefined;
      if (!(await consumeMfaToken(trx, tokenHash, user.id, now, MFA_TOKEN_MAX_FAILURES))) throw new StepAlreadyUsed();
      const tokens = await completeSignIn(ctx, trx, { user, meta, auth: { time: now, amr: [firstFactor, method] } });
      return { tokens, afterCommit };
    });
  } catch (err) {
    if (err instanceof StepAlreadyUsed) throw expiredStep();
    throw err;
  }

  if (!outcome) {
    const failures = await countMfaTokenFailure(ctx.db, tokenHash, now);
    const method = input.code !== undefined ? 'totp' : input.recovery_code !== undefined ? 'recovery_code' : 'passkey';
    await ctx.events.record(ctx.db, {
      type: 'auth.login.failed',
      subjectId: user.id,
      ip: meta.ip,
      userAgent: meta.userAgent,
      detail: { step: 'second_factor', method },
    });
    // A lockout is audited like the password step's: the account's throttle reached its threshold (every further
    // attempt waits), or this sign-in attempt's mfa_token died at its fifth wrong proof (the password is needed again).
    const accountLocked = attempt.failures >= LOGIN_THROTTLE.threshold;
    if (accountLocked || failures >= MFA_TOKEN_MAX_FAILURES) {
      await ctx.events.record(ctx.db, {
        type: 'auth.login.locked',
        actorId: null,
        subjectId: user.id,
        ip: meta.ip,
        userAgent: meta.userAgent,
        detail: { step: 'second_factor', method, locked: accountLocked ? 'account' : 'sign_in_attempt' },
      });
    }
    throw new AppError(
      'invalid_credentials',
      failures >= MFA_TOKEN_MAX_FAILURES ? 'Too many wrong codes; sign in again' : 'The code is not valid',
    );
  }
  await clearLoginFailures(ctx.db, user.email);
  await outcome.afterCommit?.();
  return { user: { ...user, lastLoginAt: now }, tokens: outcome.tokens };
}

/**
 * POST /api/auth/passkeys/login: password-less sign-in with a discoverable credential (user verification
 * required). A passkey is possession plus a PIN or biometric: it needs no further factor (amr ["hwk"]).
 */
export async function signInWithPasskey(ctx: ServiceContext, response: AuthenticationResponseJSON, meta: RequestMeta): Promise<AuthResult> {
  const now = ctx.clock.now();
  const result = await withTransaction(ctx.db, async (trx) => {
    const passkey = await verifyPasskeyAssertion(ctx, trx, response, { userId: null });
    const user = passkey ? await findUserById(trx, passkey.userId) : undefined;
    if (!user?.isActive) return undefined;
    const tokens = await completeSignIn(ctx, trx, { user, meta, auth: { time: now, amr: [AMR.passkey] } });
    return { user, tokens };
  });
  if (!result) {
    // CONTRACT §11: a failed passkey sign-in leaves a row, naming the account when the credential is one of ours.
    const known = await findPasskeyByCredentialId(ctx.db, response.id);
    await ctx.events.record(ctx.db, {
      type: 'auth.login.failed',
      actorId: null,
      subjectId: known?.userId ?? null,
      ip: meta.ip,
      userAgent: meta.userAgent,
      detail: { method: 'passkey', reason: known ? 'assertion_rejected' : 'unknown_credential' },
    });
    throw new AppError('invalid_credentials', 'The passkey could not be verified');
  }
  return { user: { ...result.user, lastLoginAt: now }, tokens: result.tokens };
}

import { countUnusedRecoveryCodes } from '../../db/repositories/mfa-recovery-codes.repo';
import { findTotp } from '../../db/repositories/mfa-totp.repo';
import { listPasskeysOfUser, type PasskeyRow } from '../../db/repositories/webauthn-credentials.repo';
import type { DbOrTrx } from '../../db';
import { AppError } from '../../errors';
import type { RequestMeta, ServiceContext } from '../context';
import type { SecurityEventType } from '../events';
import type { Principal } from '../principal';
import { hasSecondFactor } from './policy';

export interface Factors {
  /** A confirmed TOTP (a pending enrolment does not count). */
  totp: boolean;
  passkeys: PasskeyRow[];
  recoveryCodesLeft: number;
}

export type SecondFactorMethod = 'totp' | 'passkey' | 'recovery_code';

/** The user's factors; `except` leaves one passkey out (the one being added, to ask whether it is the first). */
export async function loadFactors(db: DbOrTrx, userId: string, options: { except?: string } = {}): Promise<Factors> {
  // A transaction is one connection: its queries go one after another (pg refuses overlapping ones).
  const [totp, passkeys, recoveryCodesLeft] = db.isTransaction
    ? [await findTotp(db, userId), await listPasskeysOfUser(db, userId), await countUnusedRecoveryCodes(db, userId)]
    : await Promise.all([findTotp(db, userId), listPasskeysOfUser(db, userId), countUnusedRecoveryCodes(db, userId)]);
  return { totp: Boolean(totp?.confirmedAt), passkeys: passkeys.filter((p) => p.id !== options.except), recoveryCodesLeft };
}

export function hasAnyFactor(factors: Factors): boolean {
  return factors.totp || factors.passkeys.length > 0;
}

/** The methods the second step of sign-in offers (CONTRACT §10 `methods`). */
export function methodsOf(factors: Factors): SecondFactorMethod[] {
  return signInMethods({ totp: factors.totp, passkeys: factors.passkeys.length, recoveryCodesLeft: factors.recoveryCodesLeft });
}

/** methodsOf from counts (the sign-in lookup reads counts, not the passkeys themselves). */
export function signInMethods(factors: { totp: boolean; passkeys: number; recoveryCodesLeft: number }): SecondFactorMethod[] {
  const methods: SecondFactorMethod[] = [];
  if (factors.totp) methods.push('totp');
  if (factors.passkeys > 0) methods.push('passkey');
  if (methods.length > 0 && factors.recoveryCodesLeft > 0) methods.push('recovery_code');
  return methods;
}

/**
 * Step-up rule for changing second factors: once an account has one, only a session that was opened with a second
 * factor may add, rename or remove factors or replace recovery codes. Otherwise a stolen password-only session
 * (opened before the first enrolment) could plant its own passkey and bypass the owner's second factor.
 */
export function assertMayManageFactors(principal: Principal, factors: Factors): void {
  if (hasAnyFactor(factors) && !hasSecondFactor(principal.amr)) {
    throw new AppError('mfa_required', 'Sign in again with your second factor to change your sign-in methods', { status: 403 });
  }
}

/** Records a factor change of the user by the user, in `db` (the transaction of the change). */
export async function recordFactorEvent(
  ctx: ServiceContext,
  db: DbOrTrx,
  type: Extract<SecurityEventType, 'mfa.factor.added' | 'mfa.factor.removed' | 'mfa.factor.renamed' | 'mfa.recovery_code.used'>,
  userId: string,
  detail: Record<string, unknown>,
  meta?: RequestMeta,
): Promise<void> {
  await ctx.events.record(db, {
    type,
    actorId: userId,
    subjectId: userId,
    ip: meta?.ip ?? null,
    userAgent: meta?.userAgent ?? null,
    detail,
  });
}

import type * as OTPAuthTypes from 'otpauth';
import { withTransaction, type DbOrTrx } from '../../db';
import { deleteRecoveryCodes } from '../../db/repositories/mfa-recovery-codes.repo';
import { deleteTotp, findTotp, upsertPendingTotp, useTotpStep } from '../../db/repositories/mfa-totp.repo';
import { addSessionAmr } from '../../db/repositories/sessions.repo';
import { AppError, conflict } from '../../errors';
import { checkOwnPassword } from '../account.service';
import type { RequestMeta, ServiceContext } from '../context';
import type { Principal } from '../principal';
import { assertMayManageFactors, emitFactorEvent, loadFactors } from './factors.service';
import { mailFactorAdded, mailFactorRemoved } from './notifications';
import { AMR } from './policy';
import { issueRecoveryCodes } from './recovery-codes.service';

/** Loaded on first use, not at start (issue 10: nothing loaded that a request has not needed yet). */
const otpauth = () => require('otpauth') as typeof import('otpauth');

/** RFC 6238 as CONTRACT §10 fixes it: SHA-1, 6 digits, 30 s steps, one step of drift either way. */
const TOTP_PARAMS = { algorithm: 'SHA1', digits: 6, period: 30 } as const;
const DRIFT_STEPS = 1;
/** The sealing purpose (associated data) of TOTP secrets at rest. */
const SEAL_PURPOSE = 'mfa.totp.secret';
const CODE_SHAPE = /^\d{6}$/;

function totpOf(ctx: ServiceContext, secretBase32: string, label: string): OTPAuthTypes.TOTP {
  return new (otpauth().TOTP)({
    ...TOTP_PARAMS,
    issuer: new URL(ctx.config.baseUrl).host,
    label,
    secret: otpauth().Secret.fromBase32(secretBase32),
  });
}

/** The time step a code belongs to (within the drift window), or undefined when it matches none. */
function matchingStep(ctx: ServiceContext, secretBase32: string, code: string): number | undefined {
  const token = code.replace(/\s/g, '');
  if (!CODE_SHAPE.test(token)) return undefined;
  const timestamp = ctx.clock.now().getTime();
  // otpauth compares in constant time.
  const delta = totpOf(ctx, secretBase32, '').validate({ token, timestamp, window: DRIFT_STEPS });
  if (delta === null) return undefined;
  return otpauth().TOTP.counter({ period: TOTP_PARAMS.period, timestamp }) + delta;
}

const invalidCode = () => new AppError('invalid_credentials', 'The code is not valid');

/** POST /api/auth/mfa/totp/setup: a new pending secret (replacing an earlier pending one) and its otpauth:// URL. */
export async function setupTotp(ctx: ServiceContext, principal: Principal): Promise<{ secret: string; otpauthUrl: string }> {
  const factors = await loadFactors(ctx.db, principal.userId);
  if (factors.totp) throw conflict('An authenticator app is already set up; remove it first to set up another');
  assertMayManageFactors(principal, factors);
  const secret = new (otpauth().Secret)({ size: 20 }).base32;
  const stored = await upsertPendingTotp(ctx.db, principal.userId, ctx.sealer.seal(secret, SEAL_PURPOSE), ctx.clock.now());
  if (!stored) throw conflict('An authenticator app is already set up; remove it first to set up another');
  return { secret, otpauthUrl: totpOf(ctx, secret, principal.email).toString() };
}

/** The pending secret of an enrolment in progress (the /account page shows it again until it is confirmed). */
export async function pendingTotp(ctx: ServiceContext, principal: Principal): Promise<{ secret: string; otpauthUrl: string } | undefined> {
  const row = await findTotp(ctx.db, principal.userId);
  if (!row || row.confirmedAt) return undefined;
  const secret = ctx.sealer.open(row.secretSealed, SEAL_PURPOSE);
  return { secret, otpauthUrl: totpOf(ctx, secret, principal.email).toString() };
}

/**
 * POST /api/auth/mfa/totp/confirm { code }: the first correct code turns the pending secret into the account's
 * TOTP and issues 10 recovery codes. Proving the code also counts for this session (its amr gains `otp`), so an
 * admin walked to enrolment by MFA_REQUIRED_FOR_ADMINS can go on without signing in again.
 */
export async function confirmTotp(ctx: ServiceContext, principal: Principal, code: string, meta?: RequestMeta): Promise<string[]> {
  const row = await findTotp(ctx.db, principal.userId);
  if (!row) throw conflict('Start the authenticator app setup first');
  if (row.confirmedAt) throw conflict('The authenticator app is already confirmed');
  const step = matchingStep(ctx, ctx.sealer.open(row.secretSealed, SEAL_PURPOSE), code);
  if (step === undefined) throw invalidCode();
  const codes = await withTransaction(ctx.db, async (trx) => {
    if (!(await useTotpStep(trx, principal.userId, step, ctx.clock.now(), { confirm: true }))) throw invalidCode();
    await addSessionAmr(trx, principal.sessionId, AMR.totp);
    return issueRecoveryCodes(ctx, trx, principal.userId);
  });
  emitFactorEvent(ctx, 'mfa.factor.added', principal.userId, { factor: 'totp' }, meta);
  mailFactorAdded(ctx, { email: principal.email, firstName: principal.firstName }, 'An authenticator app');
  return codes;
}

/**
 * Checks a code against the user's confirmed TOTP and records its time step in the same statement, so each code
 * is accepted once, across instances too (RFC 6238 §5.2).
 */
export async function verifyTotpCode(ctx: ServiceContext, db: DbOrTrx, userId: string, code: string): Promise<boolean> {
  const row = await findTotp(db, userId);
  if (!row?.confirmedAt) return false;
  const step = matchingStep(ctx, ctx.sealer.open(row.secretSealed, SEAL_PURPOSE), code);
  if (step === undefined) return false;
  return useTotpStep(db, userId, step, ctx.clock.now(), { confirm: false });
}

/**
 * DELETE /api/auth/mfa/totp { password } or { code }. A current code proves the factor itself; the password is
 * enough only from a session opened with a second factor (the step-up rule). Without any factor left, the
 * recovery codes go too: they only ever stand in for a factor.
 */
export async function removeTotp(
  ctx: ServiceContext,
  principal: Principal,
  proof: { password?: string; code?: string },
  meta?: RequestMeta,
): Promise<void> {
  const factors = await loadFactors(ctx.db, principal.userId);
  const row = await findTotp(ctx.db, principal.userId);
  if (!row) throw new AppError('not_found', 'No authenticator app is set up');
  if (row.confirmedAt) {
    if (proof.code !== undefined) {
      if (!(await verifyTotpCode(ctx, ctx.db, principal.userId, proof.code))) throw invalidCode();
    } else {
      assertMayManageFactors(principal, factors);
      await checkOwnPassword(ctx, principal, proof.password ?? '');
    }
  }
  await withTransaction(ctx.db, async (trx) => {
    await deleteTotp(trx, principal.userId);
    if (factors.passkeys.length === 0) await deleteRecoveryCodes(trx, principal.userId);
  });
  if (row.confirmedAt) {
    emitFactorEvent(ctx, 'mfa.factor.removed', principal.userId, { factor: 'totp' }, meta);
    mailFactorRemoved(ctx, { email: principal.email, firstName: principal.firstName }, 'An authenticator app');
  }
}

import { withTransaction } from '../../db';
import { deleteRecoveryCodes } from '../../db/repositories/mfa-recovery-codes.repo';
import { deleteTotp, findTotp, upsertPendingTotp, useTotpStep, type TotpRow } from '../../db/repositories/mfa-totp.repo';
import { addSessionAmr } from '../../db/repositories/sessions.repo';
import { AppError, conflict } from '../../errors';
import { addSeconds } from '../../lib/clock';
import type { RequestMeta, ServiceContext } from '../context';
import type { Principal } from '../principal';
import { loadFactors, recordFactorEvent } from './factors.service';
import { mailFactorAdded, mailFactorRemoved } from './notifications';
import { AMR } from './policy';
import { PENDING_TOTP_TTL_SECONDS } from './reauth-policy';
import { guardedCheck, requireFactorChangeAllowed, type ReauthProof } from './reauthenticate.service';
import { issueRecoveryCodes } from './recovery-codes.service';
import { matchingStep, otpauth, SEAL_PURPOSE, totpOf } from './factor-checks';

/** A pending enrolment of this session that has not expired (CONTRACT §11), else undefined. */
function livePending(ctx: ServiceContext, row: TotpRow | undefined, principal: Principal): TotpRow | undefined {
  if (!row || row.confirmedAt || row.pendingSessionId !== principal.sessionId) return undefined;
  return row.createdAt > pendingStartedAfter(ctx) ? row : undefined;
}

const pendingStartedAfter = (ctx: ServiceContext) => addSeconds(ctx.clock.now(), -PENDING_TOTP_TTL_SECONDS);

/**
 * POST /api/auth/mfa/totp/setup: a new pending secret of this session (replacing an earlier pending one) and its
 * otpauth:// URL. Needs a recent sign-in or a proof in the request (CONTRACT §11).
 */
export async function setupTotp(
  ctx: ServiceContext,
  principal: Principal,
  proof?: ReauthProof,
  meta?: RequestMeta,
): Promise<{ secret: string; otpauthUrl: string }> {
  const factors = await loadFactors(ctx.db, principal.userId);
  if (factors.totp) throw conflict('An authenticator app is already set up; remove it first to set up another');
  await requireFactorChangeAllowed(ctx, principal, proof, factors, { meta });
  const secret = new (otpauth().Secret)({ size: 20 }).base32;
  const sealed = ctx.sealer.seal(secret, SEAL_PURPOSE);
  const stored = await upsertPendingTotp(ctx.db, principal.userId, sealed, ctx.clock.now(), principal.sessionId);
  if (!stored) throw conflict('An authenticator app is already set up; remove it first to set up another');
  return { secret, otpauthUrl: totpOf(ctx, secret, principal.email).toString() };
}

/** This session's live pending enrolment (the /account page shows it again until it is confirmed or expires). */
export async function pendingTotp(ctx: ServiceContext, principal: Principal): Promise<{ secret: string; otpauthUrl: string } | undefined> {
  const row = livePending(ctx, await findTotp(ctx.db, principal.userId), principal);
  if (!row) return undefined;
  const secret = ctx.sealer.open(row.secretSealed, SEAL_PURPOSE);
  return { secret, otpauthUrl: totpOf(ctx, secret, principal.email).toString() };
}

/**
 * POST /api/auth/mfa/totp/confirm { code }: the first correct code turns this session's pending secret (at most 10
 * minutes old) into the account's TOTP and issues 10 recovery codes. Needs a recent sign-in or a proof in the
 * request (password, recovery_code or passkey: `code` is the new app's). The code is a guess like any other: counted
 * on the sign-in throttle, audited, 403 when wrong. Proving the code also counts for this session (its amr gains
 * `otp`), so an admin walked to enrolment by MFA_REQUIRED_FOR_ADMINS can go on without signing in again.
 */
export async function confirmTotp(
  ctx: ServiceContext,
  principal: Principal,
  code: string,
  proof?: ReauthProof,
  meta?: RequestMeta,
): Promise<string[]> {
  const row = await findTotp(ctx.db, principal.userId);
  if (row?.confirmedAt) throw conflict('The authenticator app is already confirmed');
  const pending = livePending(ctx, row, principal);
  if (!pending) throw conflict('Start the authenticator app setup first (a setup lasts 10 minutes, in the session that began it)');
  await requireFactorChangeAllowed(ctx, principal, proof, await loadFactors(ctx.db, principal.userId), { meta });
  // Filled by the check once the code is right (guardedCheck refuses a wrong one with 403).
  let codes: string[] = [];
  await guardedCheck(
    ctx,
    principal,
    'totp_enrolment',
    async () => {
      const step = matchingStep(ctx, ctx.sealer.open(pending.secretSealed, SEAL_PURPOSE), code);
      if (step === undefined) return false;
      const issued = await withTransaction(ctx.db, async (trx) => {
        const confirming = { confirm: true, sessionId: principal.sessionId, startedAfter: pendingStartedAfter(ctx) } as const;
        if (!(await useTotpStep(trx, principal.userId, step, ctx.clock.now(), confirming))) return undefined;
        await addSessionAmr(trx, principal.sessionId, AMR.totp);
        const recoveryCodes = await issueRecoveryCodes(ctx, trx, principal.userId);
        await recordFactorEvent(ctx, trx, 'mfa.factor.added', principal.userId, { factor: 'totp' }, meta);
        return recoveryCodes;
      });
      if (issued) codes = issued;
      return issued !== undefined;
    },
    meta,
  );
  mailFactorAdded(ctx, { email: principal.email, firstName: principal.firstName }, { kind: 'totp' });
  return codes;
}

/**
 * DELETE /api/auth/mfa/totp with a proof (CONTRACT §10, §11: `password`, `code`, `recovery_code` or `passkey`): a
 * current code proves the factor itself; the password is enough only from a session opened with a second factor
 * (the step-up rule). A pending enrolment goes without a proof. Without any factor left, the recovery codes go too:
 * they only ever stand in for a factor.
 */
export async function removeTotp(
  ctx: ServiceContext,
  principal: Principal,
  proof: ReauthProof | undefined,
  meta?: RequestMeta,
): Promise<void> {
  const factors = await loadFactors(ctx.db, principal.userId);
  const row = await findTotp(ctx.db, principal.userId);
  if (!row) throw new AppError('not_found', 'No authenticator app is set up');
  if (row.confirmedAt) await requireFactorChangeAllowed(ctx, principal, proof, factors, { proofRequired: true, meta });
  await withTransaction(ctx.db, async (trx) => {
    await deleteTotp(trx, principal.userId);
    if (factors.passkeys.length === 0) await deleteRecoveryCodes(trx, principal.userId);
    if (row.confirmedAt) await recordFactorEvent(ctx, trx, 'mfa.factor.removed', principal.userId, { factor: 'totp' }, meta);
  });
  if (row.confirmedAt) mailFactorRemoved(ctx, { email: principal.email, firstName: principal.firstName }, { kind: 'totp' });
}

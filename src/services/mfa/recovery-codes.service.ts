import { randomBytes } from 'node:crypto';
import { withTransaction, type DbOrTrx } from '../../db';
import { replaceRecoveryCodes } from '../../db/repositories/mfa-recovery-codes.repo';
import { conflict } from '../../errors';
import type { RequestMeta, ServiceContext } from '../context';
import type { Principal } from '../principal';
import { hasAnyFactor, loadFactors, recordFactorEvent } from './factors.service';
import { mailRecoveryCodesRegenerated } from './notifications';
import { requireFactorChangeAllowed, type ReauthProof } from './reauthenticate.service';
import { hashRecoveryCode } from './factor-checks';

export const RECOVERY_CODE_COUNT = 10;
const ALPHABET = 'abcdefghijkmnpqrstuvwxyz23456789';

/**
 * One code: 16 characters of a 32-letter alphabet without look-alikes (80 bits), shown as xxxx-xxxx-xxxx-xxxx.
 * That much entropy makes an unsalted SHA-256 at rest safe against offline guessing.
 */
function newRecoveryCode(): string {
  const bytes = randomBytes(16);
  const chars = Array.from(bytes, (b) => ALPHABET[b & 31]).join('');
  return (chars.match(/.{4}/g) ?? []).join('-');
}

/** Replaces the user's codes with RECOVERY_CODE_COUNT new ones; returns them in plain text (shown once). */
export async function issueRecoveryCodes(ctx: ServiceContext, trx: DbOrTrx, userId: string): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  await replaceRecoveryCodes(trx, userId, codes.map(hashRecoveryCode), ctx.clock.now());
  return codes;
}

/**
 * POST /api/auth/mfa/recovery-codes with a proof (`password`, `code`, `recovery_code` or `passkey`, CONTRACT §10/§11):
 * new codes replace the old ones. A recovery code given as the proof is spent like any other.
 */
export async function regenerateRecoveryCodes(
  ctx: ServiceContext,
  principal: Principal,
  proof: ReauthProof | undefined,
  meta?: RequestMeta,
): Promise<string[]> {
  const factors = await loadFactors(ctx.db, principal.userId);
  if (!hasAnyFactor(factors)) throw conflict('Set up an authenticator app or a passkey before generating recovery codes');
  await requireFactorChangeAllowed(ctx, principal, proof, factors, { proofRequired: true, meta });
  const codes = await withTransaction(ctx.db, async (trx) => {
    const issued = await issueRecoveryCodes(ctx, trx, principal.userId);
    await recordFactorEvent(ctx, trx, 'mfa.factor.added', principal.userId, { factor: 'recovery_codes' }, meta);
    return issued;
  });
  mailRecoveryCodesRegenerated(ctx, principal);
  return codes;
}

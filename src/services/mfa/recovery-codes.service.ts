import { randomBytes } from 'node:crypto';
import { withTransaction, type DbOrTrx } from '../../db';
import { consumeRecoveryCode, countUnusedRecoveryCodes, replaceRecoveryCodes } from '../../db/repositories/mfa-recovery-codes.repo';
import { findUserById } from '../../db/repositories/users.repo';
import { conflict } from '../../errors';
import { sha256Hex } from '../../lib/crypto';
import type { RequestMeta, ServiceContext } from '../context';
import type { Principal } from '../principal';
import { hasAnyFactor, loadFactors, recordFactorEvent } from './factors.service';
import { mailRecoveryCodesRegenerated, mailRecoveryCodeUsed } from './notifications';
import { requireFactorChangeAllowed, type ReauthProof } from './reauthenticate.service';

export const RECOVERY_CODE_COUNT = 10;
const ALPHABET = 'abcdefghijkmnpqrstuvwxyz23456789';

/**
 * One code: 16 characters of a 32-letter alphabet without look-alikes (80 bits), shown as xxxx-xxxx-xxxx-xxxx.
 * That much entropy makes an unsalted SHA-256 at rest safe against offline guessing.
 */
function newRecoveryCode(): string {
  const bytes = randomBytes(16);
  const chars = Array.from(bytes, (b) => ALPHABET[b & 31]).join('');
  return chars.match(/.{4}/g)!.join('-');
}

/** Case, spaces and dashes do not matter when a person types a code back. */
function hashRecoveryCode(code: string): string {
  return sha256Hex(code.toLowerCase().replace(/[^a-z0-9]/g, ''));
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
  proof: ReauthProof,
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

/**
 * Burns one recovery code of the user (single use, atomic) and records it in the caller's transaction. On success
 * the owner is mailed once that transaction is done (`afterCommit`). Returns whether the code was valid and unused.
 */
export async function useRecoveryCode(
  ctx: ServiceContext,
  trx: DbOrTrx,
  userId: string,
  code: string,
  meta?: RequestMeta,
): Promise<{ ok: false } | { ok: true; afterCommit: () => Promise<void> }> {
  if (!(await consumeRecoveryCode(trx, userId, hashRecoveryCode(code), ctx.clock.now()))) return { ok: false };
  const left = await countUnusedRecoveryCodes(trx, userId);
  await recordFactorEvent(ctx, trx, 'mfa.recovery_code.used', userId, { left }, meta);
  return {
    ok: true,
    afterCommit: async () => {
      const user = await findUserById(ctx.db, userId);
      if (user) mailRecoveryCodeUsed(ctx, user, left);
    },
  };
}

import { randomBytes } from 'node:crypto';
import { withTransaction, type DbOrTrx } from '../../db';
import { consumeRecoveryCode, countUnusedRecoveryCodes, replaceRecoveryCodes } from '../../db/repositories/mfa-recovery-codes.repo';
import { findUserById } from '../../db/repositories/users.repo';
import { conflict } from '../../errors';
import { sha256Hex } from '../../lib/crypto';
import { checkOwnPassword } from '../account.service';
import type { RequestMeta, ServiceContext } from '../context';
import type { Principal } from '../principal';
import { assertMayManageFactors, emitFactorEvent, hasAnyFactor, loadFactors } from './factors.service';
import { mailRecoveryCodesRegenerated, mailRecoveryCodeUsed } from './notifications';

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

/** POST /api/auth/mfa/recovery-codes { password }: new codes replace the old ones. */
export async function regenerateRecoveryCodes(
  ctx: ServiceContext,
  principal: Principal,
  password: string,
  meta?: RequestMeta,
): Promise<string[]> {
  const factors = await loadFactors(ctx.db, principal.userId);
  if (!hasAnyFactor(factors)) throw conflict('Set up an authenticator app or a passkey before generating recovery codes');
  assertMayManageFactors(principal, factors);
  const user = await checkOwnPassword(ctx, principal, password);
  const codes = await withTransaction(ctx.db, (trx) => issueRecoveryCodes(ctx, trx, user.id));
  emitFactorEvent(ctx, 'mfa.factor.added', user.id, { factor: 'recovery_codes' }, meta);
  mailRecoveryCodesRegenerated(ctx, user);
  return codes;
}

/**
 * Burns one recovery code of the user (single use, atomic). On success the owner is mailed and the event emitted
 * once the caller's transaction is done (`afterCommit`). Returns whether the code was valid and unused.
 */
export async function useRecoveryCode(
  ctx: ServiceContext,
  trx: DbOrTrx,
  userId: string,
  code: string,
): Promise<{ ok: false } | { ok: true; afterCommit: (meta?: RequestMeta) => Promise<void> }> {
  if (!(await consumeRecoveryCode(trx, userId, hashRecoveryCode(code), ctx.clock.now()))) return { ok: false };
  return {
    ok: true,
    afterCommit: async (meta) => {
      const [user, left] = await Promise.all([findUserById(ctx.db, userId), countUnusedRecoveryCodes(ctx.db, userId)]);
      emitFactorEvent(ctx, 'mfa.recovery_code.used', userId, { left }, meta);
      if (user) mailRecoveryCodeUsed(ctx, user, left);
    },
  };
}

import { randomUUID } from 'node:crypto';
import { withTransaction } from '../../../db';
import {
  insertRegistrationToken,
  listRegistrationTokens,
  revokeRegistrationToken,
  type RegistrationTokenRow,
} from '../../../db/repositories/registration-tokens.repo';
import { found } from '../../../errors';
import { addSeconds } from '../../../lib/clock';
import { newHashedSecret } from '../../../lib/crypto';
import type { ServiceContext } from '../../context';
import type { Principal } from '../../principal';

/** Defaults of a minted initial access token (CONTRACT §13): one registration, within a day. */
export const REGISTRATION_TOKEN_DEFAULT_TTL_SECONDS = 24 * 3600;
export const REGISTRATION_TOKEN_DEFAULT_USES = 1;

/** Initial access tokens carry a prefix so that a leaked one is recognisable (secret scanners, logs). */
const TOKEN_PREFIX = 'sso_iat_';

/**
 * Mints an initial access token for CLIENT_REGISTRATION=token. The token is returned here only; the database keeps its
 * SHA-256 (like client secrets, CONTRACT §5).
 */
export async function mintRegistrationToken(
  ctx: ServiceContext,
  principal: Principal,
  input: { expiresInSeconds?: number; maxUses?: number },
): Promise<{ token: string; row: RegistrationTokenRow }> {
  const { secret: token, hash: tokenHash } = newHashedSecret(TOKEN_PREFIX);
  const now = ctx.clock.now();
  const row = await withTransaction(ctx.db, async (trx) => {
    const inserted = await insertRegistrationToken(trx, {
      id: randomUUID(),
      tokenHash,
      createdBy: principal.userId,
      maxUses: input.maxUses ?? REGISTRATION_TOKEN_DEFAULT_USES,
      now,
      expiresAt: addSeconds(now, input.expiresInSeconds ?? REGISTRATION_TOKEN_DEFAULT_TTL_SECONDS),
    });
    await ctx.events.record(trx, {
      type: 'oauth.registration_token.created',
      subjectId: inserted.id,
      detail: { max_uses: inserted.maxUses, expires_at: inserted.expiresAt.toISOString() },
    });
    return inserted;
  });
  return { token, row };
}

export async function listTokens(ctx: ServiceContext): Promise<RegistrationTokenRow[]> {
  return listRegistrationTokens(ctx.db);
}

/** The token registers nothing more; clients it registered stay (deactivate them as any client). */
export async function revokeToken(ctx: ServiceContext, id: string): Promise<RegistrationTokenRow> {
  return withTransaction(ctx.db, async (trx) => {
    const row = found(await revokeRegistrationToken(trx, id, ctx.clock.now()), 'Registration token');
    await ctx.events.record(trx, { type: 'oauth.registration_token.revoked', subjectId: id });
    return row;
  });
}

import { withTransaction } from '../../db';
import type { OAuthClientRow } from '../../db/repositories/oauth-clients.repo';
import { revokeSession } from '../../db/repositories/sessions.repo';
import { OAuthError } from '../../errors';
import type { ServiceContext } from '../context';
import { verifyResourceToken } from './resource-tokens.service';

/**
 * RFC 7009. Refresh and access tokens are both accepted (token_type_hint only changes which is tried first);
 * either revokes the session it belongs to, so the pair dies together. An unknown, expired or already revoked
 * token answers 200 (§2.2); a valid token issued to another client (or first-party) is refused with
 * unauthorized_client and stays valid (spec §4.3: a client may revoke only tokens it issued).
 */
export async function revokeToken(
  ctx: ServiceContext,
  client: OAuthClientRow,
  input: { token: string; tokenTypeHint?: string },
): Promise<void> {
  const now = ctx.clock.now();
  const access = { payload: ctx.jwt.verifyAccess(input.token, now), type: 'access_token' } as const;
  const refresh = { payload: ctx.jwt.verifyRefresh(input.token, now), type: 'refresh_token' } as const;
  const found = input.tokenTypeHint === 'access_token' ? (access.payload ? access : refresh) : refresh.payload ? refresh : access;
  const payload = found.payload;
  if (!payload) {
    // CONTRACT §12: an RFC 9068 token with a user session behind it revokes that session; a client_credentials token
    // has none (it lives its short life; RFC 7009 §2.2 lets a server not revoke a token type).
    const resourceToken = await verifyResourceToken(ctx, input.token);
    if (!resourceToken?.sid) return;
    if (resourceToken.client_id !== client.clientId)
      throw new OAuthError('unauthorized_client', 'This token was not issued to this client');
    const sid = resourceToken.sid;
    await withTransaction(ctx.db, async (trx) => {
      if (!(await revokeSession(trx, sid, now))) return;
      await ctx.events.record(trx, {
        type: 'oauth.token.revoked',
        actorId: null,
        subjectId: typeof resourceToken.sub === 'string' ? resourceToken.sub : null,
        clientId: client.clientId,
        detail: { session_id: sid, kind: 'access_token' },
      });
    });
    return;
  }
  if (payload.client_id !== client.clientId) {
    throw new OAuthError('unauthorized_client', 'This token was not issued to this client');
  }
  await withTransaction(ctx.db, async (trx) => {
    // CONTRACT §11: an RFC 7009 revocation leaves a row naming the user whose session ended (only when one did).
    if (!(await revokeSession(trx, payload.sid, now))) return;
    await ctx.events.record(trx, {
      type: 'oauth.token.revoked',
      actorId: null,
      subjectId: payload.userId,
      clientId: client.clientId,
      detail: { session_id: payload.sid, kind: found.type },
    });
  });
}

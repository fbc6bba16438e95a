import type { DbOrTrx } from '..';

/** The browser round trip to an upstream provider (CONTRACT §16): stored at start, consumed once at the callback. */
export interface IdpFlowRow {
  stateHash: string;
  providerId: string;
  codeVerifierSealed: string;
  nonce: string;
  returnTo: string | null;
  linkUserId: string | null;
  /** The session that began a link from /account: the link completes only while it is live. */
  linkSessionId: string | null;
}

export async function insertIdpFlow(db: DbOrTrx, flow: IdpFlowRow & { browserHash: string; now: Date; expiresAt: Date }): Promise<void> {
  await db('idp_flows').insert({
    state_hash: flow.stateHash,
    browser_hash: flow.browserHash,
    provider_id: flow.providerId,
    code_verifier_sealed: flow.codeVerifierSealed,
    nonce: flow.nonce,
    return_to: flow.returnTo,
    link_user_id: flow.linkUserId,
    link_session_id: flow.linkSessionId,
    created_at: flow.now,
    expires_at: flow.expiresAt,
  });
}

/**
 * Consumes the flow in ONE conditional UPDATE: the state must be live, unused, of this provider and started by
 * this browser. A replayed callback, one from another browser or an expired one finds nothing.
 */
export async function consumeIdpFlow(
  db: DbOrTrx,
  key: { stateHash: string; browserHash: string; providerId: string; now: Date },
): Promise<IdpFlowRow | undefined> {
  const [row] = await db('idp_flows')
    .where({ state_hash: key.stateHash, browser_hash: key.browserHash, provider_id: key.providerId })
    .whereNull('used_at')
    .where('expires_at', '>', key.now)
    .update({ used_at: key.now })
    .returning(['state_hash', 'provider_id', 'code_verifier_sealed', 'nonce', 'return_to', 'link_user_id', 'link_session_id']);
  return row
    ? {
        stateHash: row.state_hash,
        providerId: row.provider_id,
        codeVerifierSealed: row.code_verifier_sealed,
        nonce: row.nonce,
        returnTo: row.return_to,
        linkUserId: row.link_user_id,
        linkSessionId: row.link_session_id,
      }
    : undefined;
}

/**
 * A take-back (CONTRACT §11, §23): every link of the account still in progress is spent (its callback finds nothing)
 * and every identity waiting for the account to be proved is deleted. Returns how many of each went.
 */
export async function cancelOpenLinksOfUser(db: DbOrTrx, userId: string, now: Date): Promise<{ flows: number; pendingLinks: number }> {
  const flows = await db('idp_flows').where({ link_user_id: userId }).whereNull('used_at').update({ used_at: now });
  const pendingLinks = await db('idp_pending_links').where({ user_id: userId }).delete();
  return { flows, pendingLinks };
}

/** An upstream identity waiting for the person to prove the local account `userId` (CONTRACT §16). */
export interface PendingLinkRow {
  userId: string;
  providerId: string;
  /** The provider's issuer or GitHub base URL the identity was asserted at (CONTRACT §23). */
  issuer: string | null;
  subject: string;
  email: string | null;
}

export async function insertPendingLink(
  db: DbOrTrx,
  link: PendingLinkRow & { tokenHash: string; now: Date; expiresAt: Date },
): Promise<void> {
  await db('idp_pending_links').insert({
    token_hash: link.tokenHash,
    user_id: link.userId,
    provider_id: link.providerId,
    issuer: link.issuer,
    subject: link.subject,
    email: link.email,
    created_at: link.now,
    expires_at: link.expiresAt,
  });
}

export interface PendingLinkRecord {
  token_hash: string;
  user_id: string;
  provider_id: string;
  issuer: string | null;
  subject: string;
  email: string | null;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

function toPendingLink(row: Pick<PendingLinkRecord, 'user_id' | 'provider_id' | 'issuer' | 'subject' | 'email'>): PendingLinkRow {
  return {
    userId: row.user_id,
    providerId: row.provider_id,
    issuer: row.issuer ?? null,
    subject: row.subject,
    email: row.email ?? null,
  };
}

/** The live pending link of this token (to name the account and provider on the sign-in page). */
export async function findLivePendingLink(db: DbOrTrx, tokenHash: string, now: Date): Promise<PendingLinkRow | undefined> {
  const row = await db('idp_pending_links').where({ token_hash: tokenHash }).whereNull('used_at').where('expires_at', '>', now).first();
  return row ? toPendingLink(row) : undefined;
}

/** Consumes the pending link in ONE conditional UPDATE, only for the account it names. */
export async function consumePendingLink(db: DbOrTrx, tokenHash: string, userId: string, now: Date): Promise<PendingLinkRow | undefined> {
  const [row] = await db('idp_pending_links')
    .where({ token_hash: tokenHash, user_id: userId })
    .whereNull('used_at')
    .where('expires_at', '>', now)
    .update({ used_at: now })
    .returning(['user_id', 'provider_id', 'issuer', 'subject', 'email']);
  return row ? toPendingLink(row) : undefined;
}

/** The person declined the pending link: gone, only for the account it names. Returns whether a row went. */
export async function discardPendingLink(db: DbOrTrx, tokenHash: string, userId: string): Promise<boolean> {
  return (await db('idp_pending_links').where({ token_hash: tokenHash, user_id: userId }).whereNull('used_at').delete()) > 0;
}

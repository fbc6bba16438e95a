import type { OAuthClientRow } from '../../db/repositories/oauth-clients.repo';
import { OAuthError } from '../../errors';
import type { ServiceContext } from '../context';
import type { DpopBinding } from '../sessions.service';
import { currentDpopNonce, dpopHeaderOf, dpopNonceRequired, DpopProofRefused, verifyDpopProof } from './dpop';

/**
 * The token endpoint's side of DPoP (RFC 9449 §5, docs/dpop.md): which key a grant's tokens are bound to, and the
 * requirements of clients and APIs (`dpop_bound_access_tokens`). Every grant calls these; the proof itself is checked
 * by dpop.ts.
 */

/** What the token route hands the grants: the request's `DPoP` header and the URL the proof must name. */
export interface TokenDpopInput {
  proof: string | string[] | undefined;
  url: string;
}

/** The proof's refusal as the token endpoint answers it (400; `use_dpop_nonce` with a fresh `DPoP-Nonce`). */
export function tokenEndpointError(ctx: ServiceContext, err: DpopProofRefused): OAuthError {
  return new OAuthError(err.error, err.message, err.error === 'use_dpop_nonce' ? { headers: { 'DPoP-Nonce': currentDpopNonce(ctx) } } : {});
}

/**
 * The key the tokens are bound to: the thumbprint of the request's proof, checked by the route before the client
 * authenticated (proofKey), or undefined when it carries none and the client does not require one.
 */
export function tokenRequestKey(client: OAuthClientRow, jkt: string | undefined): string | undefined {
  if (jkt === undefined && client.dpopBoundAccessTokens) {
    throw new OAuthError('invalid_dpop_proof', 'This client must send a DPoP proof (dpop_bound_access_tokens)');
  }
  return jkt;
}

/**
 * The thumbprint of the key of a proof POSTed to an endpoint of this server (token, PAR), or undefined without one;
 * a refusal as the endpoint answers it (400 invalid_dpop_proof, or use_dpop_nonce with a fresh DPoP-Nonce). The
 * routes call it before the client authenticates, so that a refused proof (a nonce challenge above all) spends no
 * private_key_jwt assertion: a client may repeat the request with the same assertion and a new proof.
 */
export async function proofKey(ctx: ServiceContext, input: TokenDpopInput | undefined): Promise<string | undefined> {
  if (input?.proof === undefined) return undefined;
  try {
    const proof = dpopHeaderOf(input.proof) ?? '';
    const { jkt } = await verifyDpopProof(ctx, proof, { method: 'POST', url: input.url, requireNonce: dpopNonceRequired(ctx) });
    return jkt;
  } catch (err) {
    if (err instanceof DpopProofRefused) throw tokenEndpointError(ctx, err);
    throw err;
  }
}

/**
 * How a user grant's session is bound: its access tokens to the proof's key, and a public client's refresh token too
 * (§5.0: a confidential client's refresh token is bound to its authentication instead, and may be refreshed with a new
 * key).
 */
export function dpopBinding(client: Pick<OAuthClientRow, 'type'>, jkt: string | undefined): DpopBinding | undefined {
  return jkt ? { jkt, bindRefresh: client.type === 'public' } : undefined;
}

/** An API that requires DPoP-bound tokens gets none without a proof (checked before anything is spent where possible). */
export function requireProofFor(
  resource: { identifier: string; dpopBoundAccessTokens: boolean } | undefined,
  jkt: string | undefined,
): void {
  if (resource?.dpopBoundAccessTokens && !jkt) {
    throw new OAuthError('invalid_dpop_proof', `Tokens for ${resource.identifier} must be DPoP-bound: send a DPoP proof`);
  }
}

/**
 * RFC 9449 §5.0: a bound refresh token (a public client's) refreshes only with a proof of the same key. Judged before
 * the rotation, so a refused request burns nothing.
 */
export function requireRefreshKey(boundTo: string | undefined, jkt: string | undefined): void {
  if (!boundTo) return;
  if (!jkt) throw new OAuthError('invalid_dpop_proof', 'This refresh token is DPoP-bound: send a DPoP proof of its key');
  if (jkt !== boundTo) throw new OAuthError('invalid_dpop_proof', 'The DPoP proof is not made with the key this refresh token is bound to');
}

/**
 * RFC 9449 §10: an authorization code bound to a key (`dpop_jkt` at authorize or PAR, or a proof at PAR) is exchanged
 * only with a proof of that key. Without a proof: `invalid_dpop_proof` (a proof is required here, as for a client that
 * requires DPoP). With a proof of another key: `invalid_grant`, as for a PKCE verifier that does not match the
 * challenge: the grant does not match what its authorization request committed to.
 */
export function requireCodeKey(boundTo: string | null, jkt: string | undefined): void {
  if (!boundTo) return;
  if (!jkt)
    throw new OAuthError('invalid_dpop_proof', 'This authorization code is bound to a DPoP key (dpop_jkt): send a DPoP proof of it');
  if (jkt !== boundTo)
    throw new OAuthError('invalid_grant', 'The DPoP proof is not made with the key this authorization code is bound to (dpop_jkt)');
}

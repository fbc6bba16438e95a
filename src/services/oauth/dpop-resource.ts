import type { PresentedToken } from '../../lib/presented-token';
import type { ServiceContext } from '../context';
import { currentDpopNonce, DPOP_ALGS, dpopHeaderOf, dpopNonceRequired, DpopProofRefused, verifyDpopProof } from './dpop';

/**
 * How this server's own protected resources (`/api/oauth/userinfo`, `/api/auth/me`) take an access token (RFC 9449 §7):
 * a DPoP-bound token only as `Authorization: DPoP <token>` with a proof of its key (with `ath`), never as a Bearer
 * token; an unbound token only as Bearer. A refusal is a 401 whose `WWW-Authenticate` names the DPoP scheme (§7.1).
 */

/** Why a presented token is refused, with the 401's headers (`WWW-Authenticate: DPoP …`, and `DPoP-Nonce` when asked). */
export interface DpopChallenge {
  error: 'invalid_token' | 'invalid_dpop_proof' | 'use_dpop_nonce';
  description: string;
  headers: Record<string, string>;
}

function challenge(ctx: ServiceContext, error: DpopChallenge['error'], description: string): DpopChallenge {
  const headers: Record<string, string> = {
    'WWW-Authenticate': `DPoP error="${error}", error_description="${description}", algs="${DPOP_ALGS.join(' ')}"`,
  };
  if (error === 'use_dpop_nonce') headers['DPoP-Nonce'] = currentDpopNonce(ctx);
  return { error, description, headers };
}

/**
 * Judges how a token that verified was presented: undefined when it may be used, else the challenge. `boundTo` is the
 * token's `cnf.jkt`; `request` is the method and URL the proof must name and the request's `DPoP` header.
 */
export async function judgeTokenPresentation(
  ctx: ServiceContext,
  presented: PresentedToken,
  boundTo: string | undefined,
  request: { method: string; url: string; dpop: string | string[] | undefined },
): Promise<DpopChallenge | undefined> {
  if (!boundTo) {
    if (presented.scheme === 'dpop')
      return challenge(ctx, 'invalid_token', 'This access token is not DPoP-bound: send it as a Bearer token');
    return undefined;
  }
  if (presented.scheme !== 'dpop') {
    return challenge(ctx, 'invalid_token', 'This access token is DPoP-bound: send it as Authorization: DPoP with a DPoP proof');
  }
  try {
    const proof = dpopHeaderOf(request.dpop);
    if (proof === undefined) return challenge(ctx, 'invalid_dpop_proof', 'A DPoP proof (DPoP header) is required with this access token');
    const { jkt } = await verifyDpopProof(ctx, proof, {
      method: request.method,
      url: request.url,
      accessToken: presented.token,
      requireNonce: dpopNonceRequired(ctx),
    });
    if (jkt !== boundTo)
      return challenge(ctx, 'invalid_dpop_proof', 'The DPoP proof is not made with the key this access token is bound to');
    return undefined;
  } catch (err) {
    if (err instanceof DpopProofRefused) return challenge(ctx, err.error, err.message);
    throw err;
  }
}

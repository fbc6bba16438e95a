import { withTransaction } from '../../db';
import { findClientById } from '../../db/repositories/oauth-clients.repo';
import { revokeClientSessionsOfSid, revokeSession } from '../../db/repositories/sessions.repo';
import type { ServiceContext } from '../context';
import type { Principal } from '../principal';
import { buildRedirectUrl } from '../oauth/authorize.service';
import { publicKeyFor } from './signing-keys.service';
import { jose } from '../../lib/jose';

/** The parameters of an RP-Initiated Logout 1.0 request (§2), GET query or POST form. */
export interface LogoutRequest {
  idTokenHint?: string;
  postLogoutRedirectUri?: string;
  state?: string;
  clientId?: string;
}

/** What /api/oauth/logout does next. */
export type LogoutOutcome =
  /** A bad request: shown as a page, never redirected (the target is not verified). */
  | { kind: 'error'; message: string }
  /**
   * The request cannot be tied to the signed-in user: ask before ending the session. `redirectUrl`: where the
   * confirmation's post ends (the registered post_logout_redirect_uri), for the page's CSP form-action.
   */
  | { kind: 'confirm'; clientName?: string; userEmail: string; redirectUrl?: string }
  /** Done: the browser session ended (if any); go to `redirectUrl`, or show the signed-out page. */
  | { kind: 'signed_out'; endBrowserSession: boolean; redirectUrl?: string };

interface IdTokenHint {
  sub: string;
  aud: string;
  sid?: string;
}

const MAX_HINT_LENGTH = 8192;

const isUuid = (value: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);

/**
 * An id_token we issued, checked by signature and issuer only: RP-Initiated Logout §2 lets an expired one serve as
 * a hint. Any other value (garbage, foreign or forged token) is undefined.
 */
async function verifyIdTokenHint(ctx: ServiceContext, token: string): Promise<IdTokenHint | undefined> {
  if (token.length > MAX_HINT_LENGTH) return undefined;
  try {
    const { kid } = jose().decodeProtectedHeader(token);
    const published = typeof kid === 'string' ? await publicKeyFor(ctx, kid) : undefined;
    if (!published) return undefined;
    const { payload } = await jose().compactVerify(token, published.key, { algorithms: [published.alg] });
    const claims = JSON.parse(new TextDecoder().decode(payload)) as Record<string, unknown>;
    if (claims.iss !== ctx.config.oidcIssuer || typeof claims.sub !== 'string' || typeof claims.aud !== 'string') return undefined;
    return { sub: claims.sub, aud: claims.aud, sid: typeof claims.sid === 'string' ? claims.sid : undefined };
  } catch (err) {
    if (err instanceof jose().errors.JOSEError || err instanceof SyntaxError || err instanceof TypeError) return undefined;
    throw err;
  }
}

/**
 * RP-Initiated Logout 1.0 (CONTRACT §9). The browser session ends at once when `id_token_hint` names the signed-in
 * user, otherwise only after the user confirms (`confirmed`, a CSRF-checked form post), so that a link on another
 * site cannot sign people out. The client's own session named by the hint's `sid` is revoked either way: the client
 * asked for it. The redirect goes only to a post_logout_redirect_uri registered for the client the request names.
 */
export async function planLogout(
  ctx: ServiceContext,
  request: LogoutRequest,
  browser: Principal | undefined,
  confirmed: boolean,
): Promise<LogoutOutcome> {
  const fail = (message: string): LogoutOutcome => ({ kind: 'error', message });
  const hint = request.idTokenHint ? await verifyIdTokenHint(ctx, request.idTokenHint) : undefined;
  if (request.idTokenHint && !hint) return fail('The id_token_hint is not an ID token issued by this server.');
  if (hint && request.clientId && hint.aud !== request.clientId) return fail('client_id does not match the id_token_hint.');
  const clientId = hint?.aud ?? request.clientId;
  const client = clientId ? await findClientById(ctx.db, clientId) : undefined;
  if (clientId && !client) return fail('Unknown client.');

  let redirectUrl: string | undefined;
  if (request.postLogoutRedirectUri) {
    if (!client) return fail('post_logout_redirect_uri needs id_token_hint or client_id to name the client.');
    // Exact string comparison, as for redirect URIs (RFC 9700 §4.1.3): never redirect to an unregistered address.
    if (!client.isActive || !client.postLogoutRedirectUris.includes(request.postLogoutRedirectUri)) {
      return fail('post_logout_redirect_uri is not registered for this client.');
    }
    redirectUrl = buildRedirectUrl(request.postLogoutRedirectUri, { state: request.state });
  }

  const tiedToBrowser = browser !== undefined && hint?.sub === browser.userId;
  if (browser && !tiedToBrowser && !confirmed) {
    return { kind: 'confirm', clientName: client?.name, userEmail: browser.email, redirectUrl };
  }

  const now = ctx.clock.now();
  await withTransaction(ctx.db, async (trx) => {
    // The hint's sid names the browser session; the client's sessions under it end (issue 34).
    if (hint?.sid && isUuid(hint.sid)) await revokeClientSessionsOfSid(trx, { sid: hint.sid, userId: hint.sub, clientId: hint.aud, now });
    if (browser) await revokeSession(trx, browser.sessionId, now);
    await ctx.events.record(trx, {
      type: 'oidc.logout',
      actorId: browser?.userId ?? hint?.sub ?? null,
      subjectId: browser?.userId ?? hint?.sub ?? null,
      clientId: clientId ?? null,
      detail: { browser_session_ended: browser !== undefined, confirmed: browser !== undefined && !tiedToBrowser },
    });
  });
  return { kind: 'signed_out', endBrowserSession: browser !== undefined, redirectUrl };
}

import { findClientById } from '../../db/repositories/oauth-clients.repo';
import type { ServiceContext } from '../context';
import { verifyClientAndRedirect } from './authorize.service';
import { pushedRequestOf } from './par.service';
import { resolveReturnTo } from './return-to';

/** The application a hosted sign-in is for, as the sign-in pages name it. */
export interface SignInApplication {
  name: string;
  /**
   * The client registered itself (RFC 7591 or a Client ID Metadata Document, CONTRACT §13): its name is self-chosen and
   * no administrator reviewed it, so the page says so before the password is typed (issue 30). `host` is a metadata
   * document client's URL host, the one thing about it that is not self-chosen.
   */
  unreviewed?: { host?: string };
}

/** What a sign-in page needs to know of where the sign-in returns to. */
export interface SignInTarget {
  /** The application it is for, when it returns to an authorize request of an active client. */
  application?: SignInApplication;
  /**
   * Where the page's forms end after the server's redirects (CSP form-action, issue 30): the authorize request's
   * redirect URI once the client and redirect URI checks of /authorize pass, or an allow-listed return_to on another
   * origin. Empty when the sign-in ends on this server.
   */
  formTargets: string[];
}

/**
 * The application a hosted sign-in is for (CONTRACT §15: "to continue to {client name}"): the active client of the
 * OAuth/OIDC authorize request the sign-in returns to. Undefined for any other destination, an unknown or inactive
 * client, or a return_to that is not allowed (then the page shows no name rather than one from the query). With it,
 * where the sign-in form's post ends (the redirect URI, judged by the checks /authorize itself makes).
 */
export async function signInTargetOf(ctx: ServiceContext, returnTo: string | undefined): Promise<SignInTarget> {
  const target = resolveReturnTo(ctx.config, returnTo);
  if (!target) return { formTargets: [] };
  const url = new URL(target);
  if (url.origin !== ctx.config.baseOrigin) return { formTargets: [target] };
  if (url.pathname !== '/api/oauth/authorize') return { formTargets: [] };
  const clientId = url.searchParams.getAll('client_id');
  if (clientId.length !== 1 || !clientId[0] || clientId[0].length > 200) return { formTargets: [] };
  const client = await findClientById(ctx.db, clientId[0]);
  if (!client?.isActive) return { formTargets: [] };
  const query: Record<string, string | string[]> = {};
  for (const key of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(key);
    query[key] = values.length === 1 ? values[0] : values;
  }
  // A pushed request (RFC 9126): its redirect URI is among the pushed parameters, read without spending them.
  const pushed = query.request_uri === undefined ? { params: query } : await pushedRequestOf(ctx, query);
  const verified = 'params' in pushed ? await verifyClientAndRedirect(ctx, pushed.params) : { ok: false as const };
  const formTargets = verified.ok ? [verified.redirectUri] : [];
  if (client.registration === 'admin') return { application: { name: client.name }, formTargets };
  const unreviewed = client.registration === 'metadata_document' ? { host: new URL(client.clientId).host } : {};
  return { application: { name: client.name, unreviewed }, formTargets };
}

/** The application alone, for a page whose forms end on this server (the sign-up page: its post ends on /register). */
export async function signInApplicationFor(ctx: ServiceContext, returnTo: string | undefined): Promise<SignInApplication | undefined> {
  return (await signInTargetOf(ctx, returnTo)).application;
}

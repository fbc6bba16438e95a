import { z } from 'zod';
import { Redirect } from '../../http/outcome';
import { completePendingLink, declinePendingLink, describePendingLinkFor } from '../../services/federation/sign-in.service';
import { signInTargetOf } from '../../services/oauth/sign-in-context';
import type { Principal } from '../../services/principal';
import { renderLinkConfirmPage } from '../../views/federation';
import { declareRouter, route } from '../route';
import type { RouteDeps } from '../types';
import { hostedPage, optionalText, PAGE, refuseForm, text } from './page-kit';
import { clearedPendingLink, linkConfirmUrlFor, nextAfterSignIn, pendingLinkToken } from './sign-in-flow';

const firstParty = (principal: Principal | undefined) => (principal && !principal.clientId ? principal : undefined);

/**
 * The confirmation of a pending identity link (CONTRACT §16, issue 30). An upstream sign-in whose address belongs to
 * an account leaves a pending link (the `idp_link` cookie) until the person proves that account; a sibling subdomain
 * can plant that cookie, so signing in never completes it. finishSignIn sends the person here instead: the page
 * names the provider and the upstream account, and only a CSRF-protected "Link" completes it; "Don't link" discards it.
 * Either way the browser then goes where the sign-in was going.
 */
export function createLinkConfirmPagesRouter(deps: RouteDeps) {
  const { config } = deps.ctx;
  const page = { ...PAGE, auth: 'browser', response: { description: 'HTML page or 303', kind: 'html' } } as const;
  const signInFirst = (returnTo: string | undefined) =>
    new Redirect(`/login?${new URLSearchParams({ return_to: `${config.baseUrl}${linkConfirmUrlFor(returnTo)}` })}`);

  return declareRouter(deps, [
    route(
      {
        ...page,
        method: 'get',
        path: '/login/link',
        summary: 'Confirm linking a pending identity of another provider to the signed-in account',
        query: z.object({ return_to: optionalText(4096) }),
      },
      async ({ query, principal, ctx }, req) => {
        const signedIn = firstParty(principal);
        if (!signedIn) return signInFirst(query.return_to);
        const token = pendingLinkToken(req);
        const link = token === undefined ? undefined : await describePendingLinkFor(ctx, token, signedIn.userId);
        // Nothing waits for this account (used, expired, declined, or meant for another): on where it was going.
        if (!link) return new Redirect(nextAfterSignIn(ctx, signedIn, query.return_to));
        // "Link" and "Don't link" both end where the sign-in was going (an authorization's redirect URI, say).
        const { formTargets } = await signInTargetOf(ctx, query.return_to);
        return hostedPage(({ csrf }) => renderLinkConfirmPage({ csrf, returnTo: query.return_to, link }), 200, formTargets);
      },
    ),
    route(
      {
        ...page,
        method: 'post',
        path: '/login/link',
        summary: 'Link (decision=link) or discard (decision=cancel) the pending identity (form post)',
        rateLimit: true,
        csrf: refuseForm,
        body: z.object({ return_to: optionalText(4096), decision: text(16) }),
      },
      async ({ body, principal, ctx }, req) => {
        const signedIn = firstParty(principal);
        if (!signedIn) return signInFirst(body.return_to);
        const token = pendingLinkToken(req);
        if (token !== undefined && body.decision === 'link') await completePendingLink(ctx, token, signedIn.userId);
        if (token !== undefined && body.decision !== 'link') await declinePendingLink(ctx, token, signedIn.userId);
        const next = nextAfterSignIn(ctx, signedIn, body.return_to);
        // The pending link's cookie ends here, whatever was decided.
        return new Redirect(body.decision === 'link' && next === '/login' ? '/account?done=identity_linked#identities' : next).withCookies(
          clearedPendingLink(config),
        );
      },
    ),
  ]);
}

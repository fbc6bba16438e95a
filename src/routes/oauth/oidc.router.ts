import type { Request } from 'express';
import { Redirect } from '../../http/outcome';
import { csrfValid } from '../../middleware/csrf';
import { clearedSessionCookies } from '../../middleware/session-cookies';
import { authenticateClient } from '../../services/oauth/client-auth.service';
import { requireParam } from '../../services/oauth/params';
import { buildOpenIdConfiguration } from '../../services/oidc/discovery.service';
import { introspectToken } from '../../services/oidc/introspection.service';
import { planLogout } from '../../services/oidc/logout.service';
import { publicJwks } from '../../services/oidc/signing-keys.service';
import type { Principal } from '../../services/principal';
import { renderOAuthErrorPage } from '../../views/consent';
import { pageEnv } from '../../views/env';
import { renderSignedOutPage } from '../../views/login';
import { renderLogoutConfirmPage } from '../../views/logout';
import { hostedPage, renderPageOutcome } from '../pages/page-kit';
import { declareRouter, route, routerOf, type HttpMethod } from '../route';
import type { RouteDeps } from '../types';
import { metadataRoute } from './metadata-route';
import { introspectionBody, introspectParams, jwksBody, logoutParams, openIdConfigurationBody } from '../../wire/oauth/oauth.schemas';
import type { z } from 'zod';
import type { ServiceContext } from '../../services/context';

const TAGS = ['OpenID Connect'] as const;

const refusedPage = () => {
  const { t } = pageEnv();
  return renderOAuthErrorPage({ title: t.common.requestRefused, message: t.common.formExpired });
};
/** `detail` is the developer-facing reason (English, like an OAuth error_description). */
const invalidPage = (detail: string) => {
  const { t } = pageEnv();
  return renderOAuthErrorPage({ title: t.logout.invalidTitle, message: t.logout.invalid, detail });
};

/** OpenID Connect endpoints under /api/oauth (CONTRACT §9): JWKS and RP-initiated logout. */
export function createOidcRouter(deps: RouteDeps) {
  const { config } = deps.ctx;

  /**
   * RP-Initiated Logout 1.0: GET (query) or POST (form). The confirmation page posts back here with `confirm=yes` and
   * its CSRF field; a client's own form post has neither.
   */
  const logout = async (ctx: ServiceContext, params: z.output<typeof logoutParams>, principal: Principal | undefined, req: Request) => {
    const { confirm, csrf: _csrf, ...wire } = params;
    const confirming = req.method === 'POST' && confirm === 'yes';
    if (confirming && !csrfValid(req, config)) return hostedPage(refusedPage, 403);
    const browser = principal && !principal.clientId ? principal : undefined;
    if (req.method === 'POST' && !confirming && !browser) {
      // A client's cross-site form post carries no SameSite=Lax cookie: continue as a top-level GET, which does.
      const query = new URLSearchParams(Object.entries(wire).filter((e): e is [string, string] => typeof e[1] === 'string'));
      return new Redirect(`/api/oauth/logout?${query}`);
    }
    const outcome = await planLogout(
      ctx,
      {
        idTokenHint: wire.id_token_hint,
        postLogoutRedirectUri: wire.post_logout_redirect_uri,
        state: wire.state,
        clientId: wire.client_id,
      },
      browser,
      confirming,
    );
    if (outcome.kind === 'error') return hostedPage(() => invalidPage(outcome.message), 400);
    if (outcome.kind === 'confirm') {
      const { userEmail, clientName, redirectUrl } = outcome;
      return hostedPage(
        ({ csrf }) => renderLogoutConfirmPage({ csrf, userEmail, clientName, params: wire }),
        200,
        redirectUrl ? [redirectUrl] : undefined,
      );
    }
    const cleared = outcome.endBrowserSession ? clearedSessionCookies(config) : [];
    if (outcome.redirectUrl) return new Redirect(outcome.redirectUrl, undefined, req.method === 'POST' ? 303 : 302).withCookies(...cleared);
    return hostedPage(renderSignedOutPage).withCookies(...cleared);
  };
  const logoutDeclaration = (method: HttpMethod, summary: string) =>
    ({
      method,
      path: '/logout',
      summary,
      auth: 'browser',
      noStore: true,
      outcome: renderPageOutcome,
      // Issue 19: a browser page that ends the session, never readable cross-origin (CONTRACT §8), whatever the origin.
      cors: false,
      response: {
        status: 302,
        kind: 'redirect',
        description:
          "To the client's registered post_logout_redirect_uri with state; or 200 with the confirmation page or the signed-out page (400 page for a bad request)",
      },
    }) as const;
  const logoutRoute = (method: HttpMethod, summary: string) =>
    method === 'post'
      ? route({ ...logoutDeclaration(method, summary), form: true, body: logoutParams }, ({ body, principal, ctx }, req) =>
          logout(ctx, body, principal, req),
        )
      : route({ ...logoutDeclaration(method, summary), query: logoutParams }, ({ query, principal, ctx }, req) =>
          logout(ctx, query, principal, req),
        );

  return declareRouter(
    deps,
    [
      route(
        {
          method: 'get',
          path: '/jwks',
          summary: 'Public keys that verify id_tokens and RFC 9068 access tokens: the current ones and those retired less than an hour ago',
          auth: 'none',
          cors: 'public',
          cacheControl: 'public, max-age=300',
          response: { description: 'RFC 7517 JWK Set (Cache-Control: public, max-age=300)', schema: jwksBody },
        },
        ({ ctx }) => publicJwks(ctx),
      ),
      logoutRoute(
        'get',
        'RP-Initiated Logout 1.0 (browser): ends the SSO session, asking first unless id_token_hint names the signed-in user',
      ),
      logoutRoute('post', 'RP-Initiated Logout 1.0, form post (also the confirmation form, with csrf and confirm=yes)'),
    ],
    { tags: TAGS },
  );
}

/** Token introspection (RFC 7662), mounted in the OAuth protocol scope (RFC 6749's error dialect). */
export const createOidcProtocolRouter = routerOf(
  () => [
    route(
      {
        method: 'post',
        path: '/introspect',
        summary: 'Token introspection (RFC 7662) for resource servers authenticated as any active client',
        auth: 'client',
        noStore: true,
        form: true,
        body: introspectParams,
        response: { description: '{ active: false }, or the live token described', schema: introspectionBody },
      },
      async ({ body, ctx }, req) => {
        const credentials = { authorization: req.headers.authorization, ...body.client };
        const caller = await authenticateClient(ctx, credentials, { endpoint: 'introspect' });
        return introspectToken(ctx, caller, { token: requireParam(body.token, 'token'), tokenTypeHint: body.tokenTypeHint });
      },
    ),
  ],
  { tags: TAGS },
);

/**
 * The OpenID Provider metadata, a public document: at /.well-known/openid-configuration, where OpenID Connect
 * Discovery 1.0 §4 looks for the issuer BASE_URL, and under /api/oauth/.well-known (CONTRACT §9).
 */
export function createOidcDiscoveryRouter(deps: RouteDeps) {
  return declareRouter(deps, [
    metadataRoute(
      deps,
      {
        path: '/openid-configuration',
        summary: 'OpenID Connect Discovery 1.0',
        tags: TAGS,
        description: 'OpenID Provider metadata',
        schema: openIdConfigurationBody,
      },
      buildOpenIdConfiguration,
    ),
  ]);
}

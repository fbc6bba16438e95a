import type { Request, Response } from 'express';
import { z } from 'zod';
import { clearSessionCookies } from '../../middleware/session-cookies';
import type { Principal } from '../../services/principal';
import { idpMetadataXml } from '../../services/saml/saml-metadata.service';
import { receiveLogoutRequest } from '../../services/saml/saml-slo.service';
import { continueSso, receiveAuthnRequest, startIdpInitiated, type SamlOutcome } from '../../services/saml/saml-sso.service';
import { renderOAuthErrorPage } from '../../views/consent';
import { renderSamlPostPage } from '../../views/saml-post';
import { html, optionalText } from '../pages/page-kit';
import { declareRouter, route } from '../route';
import { rawQueryOf } from '../shared';
import type { RouteDeps } from '../types';

/** The SAML bindings' parameters, read leniently (a malformed one is the service's error page, never a 400 JSON). */
const messageFields = z.object({ SAMLRequest: optionalText(), RelayState: optionalText(), app: optionalText(100) });
const continueQuery = z.object({ request: optionalText(100) });

/** What a SAML endpoint answers, in HTML: the error page (400), a redirect, or the auto-submitting form. */
function answer(req: Request, res: Response, outcome: SamlOutcome): void {
  const { t } = req.pageEnv!;
  if (outcome.kind === 'redirect') return res.redirect(303, outcome.url);
  if (outcome.kind === 'post') {
    const { action, field, message, relayState, appName } = outcome;
    // The form posts to the SP's registered ACS (or SLO) URL, checked by the service.
    return html(res, 200, renderSamlPostPage({ action, field, message, relayState, appName }), [action]);
  }
  html(res, 400, renderOAuthErrorPage({ title: t.oauthPages.invalidLinkTitle, message: t.oauthPages.invalidLink, detail: outcome.detail }));
}

const firstParty = (principal: Principal | undefined) => (principal && !principal.clientId ? principal : undefined);

/**
 * The SAML 2.0 identity provider's endpoints (CONTRACT §19): metadata, SSO (HTTP-Redirect and HTTP-POST bindings,
 * IdP-initiated with ?app=), the sign-in continuation, and single logout. They answer HTML (the error page for any
 * refusal) and never JSON: a browser is on the other end.
 */
export function createSamlRouter(deps: RouteDeps) {
  const { ctx } = deps;
  const { config } = ctx;
  const page = {
    noStore: true,
    cors: false,
    tags: ['SAML'],
    response: { description: 'HTML page (the POST form, or an error page)', kind: 'html' },
  } as const;
  const sso = async (
    req: Request,
    res: Response,
    binding: 'redirect' | 'post',
    fields: z.output<typeof messageFields>,
    principal?: Principal,
  ) => {
    if (binding === 'redirect' && fields.app !== undefined && fields.SAMLRequest === undefined) {
      return answer(
        req,
        res,
        await startIdpInitiated(ctx, fields.app, firstParty(principal), `${config.baseUrl}/saml/sso${rawQueryOf(req)}`),
      );
    }
    answer(
      req,
      res,
      await receiveAuthnRequest(ctx, { binding, message: fields.SAMLRequest, relayState: fields.RelayState, rawQuery: rawQueryOf(req) }),
    );
  };
  const slo = async (
    req: Request,
    res: Response,
    binding: 'redirect' | 'post',
    fields: z.output<typeof messageFields>,
    principal?: Principal,
  ) => {
    const signedIn = firstParty(principal);
    const { outcome, endedSessionIds } = await receiveLogoutRequest(
      ctx,
      { binding, message: fields.SAMLRequest, relayState: fields.RelayState, rawQuery: rawQueryOf(req) },
      signedIn,
    );
    if (signedIn && endedSessionIds.includes(signedIn.sessionId)) clearSessionCookies(res, config);
    answer(req, res, outcome);
  };
  return declareRouter(
    deps,
    [
      route(
        {
          method: 'get',
          path: '/metadata',
          summary: 'SAML IdP metadata (entity id, signing certificates, SSO and SLO endpoints)',
          auth: 'none',
          tags: ['SAML'],
          cacheControl: 'public, max-age=300',
          response: { description: 'application/samlmetadata+xml', kind: 'html' },
        },
        async (_input, _req, res) => {
          res
            .type('application/samlmetadata+xml')
            .set('Cache-Control', 'public, max-age=300')
            .send(await idpMetadataXml(ctx));
        },
      ),
      route(
        {
          ...page,
          method: 'get',
          path: '/sso',
          summary: 'SAML SSO, HTTP-Redirect binding (SAMLRequest, RelayState, SigAlg, Signature) or IdP-initiated (?app=<id>)',
          auth: 'browser',
          rateLimit: true,
          query: messageFields,
        },
        async ({ query, principal }, req, res) => sso(req, res, 'redirect', query, principal),
      ),
      route(
        {
          ...page,
          method: 'post',
          path: '/sso',
          summary: 'SAML SSO, HTTP-POST binding (SAMLRequest, RelayState)',
          auth: 'none',
          rateLimit: true,
          form: true,
          body: messageFields,
        },
        async ({ body }, req, res) => sso(req, res, 'post', body),
      ),
      route(
        {
          ...page,
          method: 'get',
          path: '/continue',
          summary: 'SAML sign-in continuation: the stored request meets the signed-in person (the login page returns here)',
          auth: 'browser',
          query: continueQuery,
        },
        async ({ query, principal }, req, res) => answer(req, res, await continueSso(ctx, query.request ?? '', firstParty(principal))),
      ),
      route(
        {
          ...page,
          method: 'get',
          path: '/slo',
          summary: 'SAML single logout, HTTP-Redirect binding',
          auth: 'browser',
          rateLimit: true,
          query: messageFields,
        },
        async ({ query, principal }, req, res) => slo(req, res, 'redirect', query, principal),
      ),
      route(
        {
          ...page,
          method: 'post',
          path: '/slo',
          summary: 'SAML single logout, HTTP-POST binding',
          auth: 'browser',
          rateLimit: true,
          form: true,
          body: messageFields,
        },
        async ({ body, principal }, req, res) => slo(req, res, 'post', body, principal),
      ),
    ],
    { tags: ['SAML'] },
  );
}

import type { Request } from 'express';
import { z } from 'zod';
import { pageEnvOf } from '../../middleware/page-env';
import { clearedSessionCookies } from '../../middleware/session-cookies';
import { Document, Redirect, type Outcome } from '../../http/outcome';
import type { Principal } from '../../services/principal';
import { idpMetadataXml } from '../../services/saml/saml-metadata.service';
import { receiveLogoutRequest } from '../../services/saml/saml-slo.service';
import {
  continueSso,
  receiveAuthnRequest,
  startIdpInitiated,
  type SamlMessageInput,
  type SamlOutcome,
} from '../../services/saml/saml-sso.service';
import { renderOAuthErrorPage } from '../../views/consent';
import { renderSamlPostPage } from '../../views/saml-post';
import { hostedPage, optionalText, renderPageOutcome } from '../pages/page-kit';
import { declareRouter, route } from '../route';
import { rawQueryOf } from '../shared';
import type { RouteDeps } from '../types';
import type { ServiceContext } from '../../services/context';

/** The SAML bindings' parameters, read leniently (a malformed one is the service's error page, never a 400 JSON). */
const messageFields = z.object({ SAMLRequest: optionalText(), RelayState: optionalText(), app: optionalText(100) });
const continueQuery = z.object({ request: optionalText(100) });

/** What a SAML endpoint answers, in HTML: the error page (400), a redirect, or the auto-submitting form. */
function answer(req: Request, outcome: SamlOutcome): Outcome {
  if (outcome.kind === 'redirect') return new Redirect(outcome.url);
  if (outcome.kind === 'post') {
    const { action, field, message, relayState, appName } = outcome;
    // The form posts to the SP's registered ACS (or SLO) URL, checked by the service.
    return hostedPage(() => renderSamlPostPage({ action, field, message, relayState, appName }), 200, [action]);
  }
  const { t } = pageEnvOf(req);
  const { detail } = outcome;
  return hostedPage(() => renderOAuthErrorPage({ title: t.oauthPages.invalidLinkTitle, message: t.oauthPages.invalidLink, detail }), 400);
}

type Binding = SamlMessageInput['binding'];
type BindingHandler = (
  ctx: ServiceContext,
  req: Request,
  binding: Binding,
  fields: z.output<typeof messageFields>,
  principal?: Principal,
) => Promise<Outcome>;

/** A received message as its binding delivered it (the Redirect binding's signature is over the query as sent). */
const messageOf = (req: Request, binding: Binding, fields: z.output<typeof messageFields>): SamlMessageInput => ({
  binding,
  message: fields.SAMLRequest,
  relayState: fields.RelayState,
  rawQuery: rawQueryOf(req),
});

const firstParty = (principal: Principal | undefined) => (principal && !principal.clientId ? principal : undefined);

/**
 * The SAML 2.0 identity provider's endpoints (CONTRACT §19): metadata, SSO (HTTP-Redirect and HTTP-POST bindings,
 * IdP-initiated with ?app=), the sign-in continuation, and single logout. They answer HTML (the error page for any
 * refusal) and never JSON: a browser is on the other end.
 */
export function createSamlRouter(deps: RouteDeps) {
  const { config } = deps.ctx;
  const page = {
    noStore: true,
    cors: false,
    tags: ['SAML'],
    response: { description: 'HTML page (the POST form, or an error page)', kind: 'html' },
    outcome: renderPageOutcome,
  } as const;
  const sso: BindingHandler = async (ctx, req, binding, fields, principal) => {
    if (binding === 'redirect' && fields.app !== undefined && fields.SAMLRequest === undefined) {
      const self = `${config.baseUrl}/saml/sso${rawQueryOf(req)}`;
      return answer(req, await startIdpInitiated(ctx, fields.app, firstParty(principal), self));
    }
    return answer(req, await receiveAuthnRequest(ctx, messageOf(req, binding, fields)));
  };
  const slo: BindingHandler = async (ctx, req, binding, fields, principal) => {
    const signedIn = firstParty(principal);
    const { outcome, endedSessionIds } = await receiveLogoutRequest(ctx, messageOf(req, binding, fields), signedIn);
    // The browser's own session ended: its cookies go with it.
    const ended = signedIn !== undefined && endedSessionIds.includes(signedIn.sessionId);
    return answer(req, outcome).withCookies(...(ended ? clearedSessionCookies(config) : []));
  };
  /** One endpoint in both bindings: GET (HTTP-Redirect, the browser's session read) and POST (HTTP-POST). */
  const bindings = (path: '/sso' | '/slo', handle: BindingHandler, o: { redirect: string; post: string; postReadsSession: boolean }) => [
    route(
      { ...page, method: 'get', path, summary: o.redirect, auth: 'browser', rateLimit: true, query: messageFields },
      async ({ query, principal, ctx }, req) => handle(ctx, req, 'redirect', query, principal),
    ),
    // A cross-site POST to /saml/sso never acts on the browser's session (docs/saml.md, Browser); /saml/slo may end it.
    o.postReadsSession
      ? route(
          { ...page, method: 'post', path, summary: o.post, auth: 'browser', rateLimit: true, form: true, body: messageFields },
          async ({ body, principal, ctx }, req) => handle(ctx, req, 'post', body, principal),
        )
      : route(
          { ...page, method: 'post', path, summary: o.post, auth: 'none', rateLimit: true, form: true, body: messageFields },
          async ({ body, ctx }, req) => handle(ctx, req, 'post', body),
        ),
  ];
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
        async ({ ctx }) => new Document(200, 'application/samlmetadata+xml', await idpMetadataXml(ctx)),
      ),
      ...bindings('/sso', sso, {
        redirect: 'SAML SSO, HTTP-Redirect binding (SAMLRequest, RelayState, SigAlg, Signature) or IdP-initiated (?app=<id>)',
        post: 'SAML SSO, HTTP-POST binding (SAMLRequest, RelayState)',
        postReadsSession: false,
      }),
      route(
        {
          ...page,
          method: 'get',
          path: '/continue',
          summary: 'SAML sign-in continuation: the stored request meets the signed-in person (the login page returns here)',
          auth: 'browser',
          query: continueQuery,
        },
        async ({ query, principal, ctx }, req) => answer(req, await continueSso(ctx, query.request ?? '', firstParty(principal))),
      ),
      ...bindings('/slo', slo, {
        redirect: 'SAML single logout, HTTP-Redirect binding',
        post: 'SAML single logout, HTTP-POST binding',
        postReadsSession: true,
      }),
    ],
    { tags: ['SAML'] },
  );
}

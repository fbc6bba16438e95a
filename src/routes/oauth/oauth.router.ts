import { z } from 'zod';
import type { Request } from 'express';
import { OAuthError } from '../../errors';
import { presentationChallenge, resolvePrincipal } from '../../middleware/authenticate';
import { presentedTokenOf } from '../../lib/presented-token';
import { startAuthorization } from '../../services/oauth/authorize.service';
import { judgePushedRequest, pushAuthorizationRequest, startPushedAuthorization } from '../../services/oauth/par.service';
import { authenticateClient, type ClientAuthOptions, type ClientCredentialsInput } from '../../services/oauth/client-auth.service';
import { startDeviceAuthorization } from '../../services/oauth/device.service';
import { approveAuthorization, denyAuthorization, getConsentInfo } from '../../services/oauth/consent.service';
import { buildDiscoveryDocument } from '../../services/oauth/discovery.service';
import { requireParam } from '../../services/oauth/params';
import { revokeToken } from '../../services/oauth/revoke.service';
import { grantTokens, refuseBeforeSpend } from '../../services/oauth/token.service';
import { currentDpopNonce, dpopNonceRequired } from '../../services/oauth/dpop';
import { proofKey } from '../../services/oauth/dpop-binding';
import { getUserInfo, invalidToken } from '../../services/oauth/userinfo.service';
import { renderOAuthErrorPage } from '../../views/consent';
import { Redirect } from '../../http/outcome';
import { hostedPage, renderPageOutcome } from '../pages/page-kit';
import { arrivalOf, rawQueryOf, requestMeta } from '../shared';
import { declareRouter, replyOf, route, type HttpMethod } from '../route';
import type { RouteDeps } from '../types';
import { metadataRoute } from './metadata-route';
import {
  authorizeQuery,
  consentInfoBody,
  consentRequestBody,
  deviceAuthorizationBody,
  deviceAuthorizationParams,
  discoveryBody,
  parParams,
  parResponseBody,
  redirectUrlBody,
  revokeParams,
  tokenParams,
  tokenResponseBody,
  userInfoBody,
} from '../../wire/oauth/oauth.schemas';
import type { ServiceContext } from '../../services/context';

/**
 * The OAuth 2.0 endpoints a browser or the consent UI calls (spec §4.3, CONTRACT §5): authorize and the consent
 * decisions, in the contract's error dialect. The protocol endpoints are createOAuthProtocolRouter.
 */
export function createOAuthRouter(deps: RouteDeps) {
  /** The consent UI's answer to a pending authorization: the redirect the browser follows next. */
  const consentDecision = (path: string, summary: string, decide: typeof approveAuthorization) =>
    route(
      {
        method: 'post',
        path,
        summary,
        auth: 'user',
        noStore: true,
        body: consentRequestBody,
        response: { description: '{ redirect_url }', schema: redirectUrlBody },
        errors: [404],
      },
      async ({ principal, body, ctx }) => ({ redirect_url: await decide(ctx, principal, body.requestId) }),
    );

  return declareRouter(
    deps,
    [
      route(
        {
          method: 'get',
          path: '/authorize',
          summary: 'Authorization endpoint (code + PKCE S256); browser redirect',
          auth: 'browser',
          noStore: true,
          // RFC 9700 §2.6 / CONTRACT §8: an authorization redirect is never readable cross-origin.
          cors: false,
          query: authorizeQuery,
          response: {
            status: 302,
            description: 'To the login page, the consent page, or redirect_uri with code and state',
            kind: 'redirect',
          },
          // The browser's answers: the redirect, or the error page when the client cannot be trusted with it.
          outcome: renderPageOutcome,
        },
        async ({ query, principal, env, ctx }, req) => {
          const authorizeUrl = `${ctx.config.baseUrl}/api/oauth/authorize${rawQueryOf(req)}`;
          // RFC 9126 §4 (issue 34): a pushed request names only client_id and request_uri.
          const outcome =
            query.request_uri !== undefined
              ? await startPushedAuthorization(ctx, query, principal, authorizeUrl)
              : await startAuthorization(ctx, query, principal, authorizeUrl);
          if (outcome.kind === 'redirect') return new Redirect(outcome.url, undefined, 302);
          // RFC 6749 §4.1.2.1: the client or redirect URI is not verified, so the error is shown here, never redirected.
          if (req.accepts(['json', 'html']) === 'html') {
            const { invalidLinkTitle, invalidLink } = env.t.oauthPages;
            return hostedPage(
              () => renderOAuthErrorPage({ title: invalidLinkTitle, message: invalidLink, detail: outcome.description }),
              400,
            );
          }
          throw new OAuthError(outcome.error, outcome.description, { status: 400 });
        },
      ),
      route(
        {
          method: 'get',
          path: '/consent-info',
          summary: 'Client and scopes of a pending authorization (query request_id)',
          auth: 'user',
          noStore: true,
          query: consentRequestBody,
          response: {
            description: '{ request_id, client: { client_id, name }, scopes, redirect_uri, resources }',
            schema: consentInfoBody,
          },
          errors: [404],
        },
        async ({ principal, query, ctx }) => {
          const info = await getConsentInfo(ctx, principal, query.requestId);
          return {
            request_id: info.request.id,
            client: { client_id: info.client.clientId, name: info.client.name },
            scopes: info.scopes,
            redirect_uri: info.request.redirectUri,
            resources: info.resources,
          };
        },
      ),
      consentDecision('/authorize/approve', 'Approve; returns the redirect carrying the one-time code', approveAuthorization),
      consentDecision('/authorize/deny', 'Deny; returns the redirect carrying error=access_denied', denyAuthorization),
    ],
    { tags: ['OAuth 2.0'] },
  );
}

/**
 * What a client calls with its own authentication (token, revocation, device authorization, PAR): a form post, never
 * cached (RFC 6749 §5.1), with CORS for the origins of the client it names.
 */
const clientCall = { auth: 'client', noStore: true, form: true, cors: 'client' } as const;

/**
 * The OAuth 2.0 protocol endpoints (token, revocation, userinfo), mounted in the OAuth protocol scope: every error,
 * theirs or a step's before them, answers in RFC 6749's dialect. Token responses and their errors are never cached
 * (RFC 6749 §5.1).
 */
export function createOAuthProtocolRouter(deps: RouteDeps) {
  const app = deps.ctx;

  /**
   * client_secret_basic, client_secret_post (RFC 6749 §2.3.1) or private_key_jwt (RFC 7523), shared by the token,
   * revocation, device authorization and PAR endpoints.
   */
  const authenticatedClient = (ctx: ServiceContext, req: Request, body: ClientCredentialsInput, options: ClientAuthOptions) =>
    authenticateClient(ctx, { authorization: req.headers.authorization, ...body }, options);

  /** RFC 9449 §8: under `dpop_nonce_required`, an answer to a DPoP request carries the nonce of the next proof. */
  const dpopNonceFor = (proof: unknown): Record<string, string> | undefined =>
    proof !== undefined && dpopNonceRequired(app) ? { 'DPoP-Nonce': currentDpopNonce(app) } : undefined;

  const userinfo = (method: HttpMethod, summary: string, description: string) =>
    route(
      {
        method,
        path: '/userinfo',
        summary,
        auth: 'token',
        dialect: 'oauth',
        noStore: true,
        description:
          'Authorization: Bearer <token>; a DPoP-bound token (RFC 9449) only as Authorization: DPoP <token> with a `DPoP` proof ' +
          'header (htm, htu, ath) of its key, else 401 with WWW-Authenticate: DPoP error="invalid_token" | "invalid_dpop_proof" | ' +
          '"use_dpop_nonce" (then with a DPoP-Nonce header).',
        response: { description, schema: userInfoBody },
        cors: 'client',
      },
      async ({ ctx }, req) => {
        const presented = presentedTokenOf(req.headers.authorization);
        if (!presented) {
          throw new OAuthError('invalid_token', 'A Bearer access token is required', { headers: { 'WWW-Authenticate': 'Bearer' } });
        }
        const principal = await resolvePrincipal(ctx, presented.token);
        if (!principal) throw invalidToken();
        // RFC 9449 §7: a DPoP-bound token only with a proof of its key, never as a Bearer token (docs/dpop.md).
        const refused = await presentationChallenge(ctx, req, presented, principal);
        if (refused) throw new OAuthError(refused.error, refused.description, { status: 401, headers: refused.headers });
        return getUserInfo(ctx, principal);
      },
    );

  return declareRouter(
    deps,
    [
      route(
        {
          method: 'post',
          path: '/token',
          summary: 'Token endpoint: authorization_code, refresh_token, client_credentials, device_code and token-exchange grants',
          description:
            'Confidential clients authenticate with client_secret_basic or client_secret_post; public clients send client_id alone ' +
            '(CONTRACT §12). With `resource` (RFC 8707) the access token is an RFC 9068 JWT for that API; client_credentials always ' +
            'answers one (sub = client_id, no refresh token). The device grant answers authorization_pending, slow_down, ' +
            'access_denied or expired_token until the user has approved, then the tokens once. A `DPoP` request header (an RFC 9449 ' +
            'proof: typ dpop+jwt, ES256/RS256/PS256/EdDSA, htm POST, htu this URL, iat within 60 s, single-use jti) binds the ' +
            "tokens to its key: `token_type: DPoP`, `cnf.jkt` in the access token (and in a public client's refresh token). A bad or " +
            'missing-but-required proof is 400 invalid_dpop_proof; with the dpop_nonce_required setting, 400 use_dpop_nonce and a ' +
            '`DPoP-Nonce` response header (docs/dpop.md). A code bound to a DPoP key (dpop_jkt at authorize or PAR) is exchanged only ' +
            'with a proof of that key: without one 400 invalid_dpop_proof, with another key 400 invalid_grant; the code is not spent. ' +
            'Token exchange (RFC 8693, grant_type ' +
            'urn:ietf:params:oauth:grant-type:token-exchange, confidential clients listing it in grant_types): subject_token (an ' +
            'access token or an id_token of a live session this server issued to a user), optional actor_token (an access token of ' +
            'the calling client: the answer carries act), resource or audience (an API the client is allowed) and scope (no wider ' +
            "than the subject token's for that API, else invalid_scope); answers an RFC 9068 token with issued_token_type, bound to " +
            'the same DPoP key when the subject token was bound (docs/token-exchange.md).',
          ...clientCall,
          body: tokenParams,
          response: { description: 'Tokens', schema: tokenResponseBody },
        },
        async ({ body, ctx }, req) => {
          // RFC 9449 (docs/dpop.md): a DPoP header binds the tokens to its key; the proof names this endpoint's URL. Checked
          // before the client authenticates: a refused proof (use_dpop_nonce) spends no private_key_jwt assertion.
          const dpop = { proof: req.headers.dpop, url: `${ctx.config.baseUrl}/api/oauth/token` };
          const proofJkt = await proofKey(ctx, dpop);
          // Every refusal that spends nothing (a proof the client, the API or the code requires, the grant type) comes
          // before the client's private_key_jwt assertion is spent: the client may repeat the request with it.
          const client = await authenticatedClient(ctx, req, body.client, {
            endpoint: 'token',
            beforeSpend: (known) => refuseBeforeSpend(ctx, known, body.request, proofJkt),
          });
          const meta = { ...requestMeta(req), arrivedAt: arrivalOf(ctx.clock, req) };
          const tokens = await grantTokens(ctx, client, body.request, meta, proofJkt);
          return replyOf(tokens).withHeaders(dpopNonceFor(dpop.proof));
        },
      ),
      userinfo(
        'get',
        'OpenID profile of the token holder, by scope',
        '{ sub } plus name, updated_at (profile) and email, email_verified (email); all for first-party tokens',
      ),
      userinfo('post', 'Same as GET (Bearer header only)', 'As GET'),
      route(
        {
          method: 'post',
          path: '/revoke',
          summary: 'Token revocation (RFC 7009)',
          ...clientCall,
          body: revokeParams,
          // CONTRACT §8: `{}` as JSON rather than an empty body, which some client libraries refuse to parse.
          response: { description: 'Revoked, or unknown / already revoked: `{}`', schema: z.strictObject({}) },
        },
        async ({ body, ctx }, req) => {
          const client = await authenticatedClient(ctx, req, body.client, { endpoint: 'revoke' });
          await revokeToken(ctx, client, { token: requireParam(body.token, 'token'), tokenTypeHint: body.tokenTypeHint });
          return {};
        },
      ),
      route(
        {
          method: 'post',
          path: '/device_authorization',
          summary: 'Device authorization request (RFC 8628 §3.1): a device code to poll with and a user code for /device',
          description:
            'Client authentication as at the token endpoint (a public client sends client_id alone). The client must list the ' +
            'grant urn:ietf:params:oauth:grant-type:device_code. `scope` is required; `resource` (RFC 8707) is optional.',
          ...clientCall,
          dialect: 'oauth',
          body: deviceAuthorizationParams,
          response: { description: 'RFC 8628 §3.2 answer', schema: deviceAuthorizationBody },
        },
        async ({ body, ctx }, req) => {
          const client = await authenticatedClient(ctx, req, body.client, { endpoint: 'device' });
          return startDeviceAuthorization(ctx, client, { scope: body.scope, resource: body.resource });
        },
      ),
      route(
        {
          method: 'post',
          path: '/par',
          summary: 'Pushed authorization request (RFC 9126): a single-use request_uri for /api/oauth/authorize, valid 60 s',
          description:
            'Client authentication as at the token endpoint (a public client sends client_id alone). The parameters are those of ' +
            '/api/oauth/authorize, judged by the same rules; an error is a 400 in the RFC 6749 dialect, never a redirect. The ' +
            'browser then goes to /api/oauth/authorize?client_id=…&request_uri=…, which uses the pushed parameters once. A `DPoP` ' +
            'header (RFC 9449 §10.1: a proof with htm POST, htu this URL) binds the authorization code to its key, as `dpop_jkt` ' +
            'does; a bad proof, or a dpop_jkt of another key, is 400 invalid_dpop_proof (use_dpop_nonce with a DPoP-Nonce header ' +
            'under the dpop_nonce_required setting). A refusal of the parameters comes before a private_key_jwt assertion is ' +
            'spent: the client repeats the corrected request with the same assertion.',
          ...clientCall,
          dialect: 'oauth',
          body: parParams,
          response: { status: 201, description: 'RFC 9126 §2.2 answer', schema: parResponseBody },
        },
        async ({ body, ctx }, req) => {
          // RFC 9449 §10.1: a DPoP header binds the code to its key; the proof names this endpoint's URL. Checked before the
          // client authenticates, as at the token endpoint.
          const dpop = { proof: req.headers.dpop, url: `${ctx.config.baseUrl}/api/oauth/par` };
          const proofJkt = await proofKey(ctx, dpop);
          // Every refusal of the pushed parameters (they spend nothing) comes before the client's private_key_jwt
          // assertion is spent, as at the token endpoint: the client may repeat the corrected request with it.
          const client = await authenticatedClient(ctx, req, body.client, {
            endpoint: 'par',
            beforeSpend: async (known) => void (await judgePushedRequest(ctx, known, body.params, proofJkt)),
          });
          const pushed = await pushAuthorizationRequest(ctx, client, body.params, proofJkt);
          return replyOf(pushed).withHeaders(dpopNonceFor(dpop.proof));
        },
      ),
    ],
    { tags: ['OAuth 2.0'] },
  );
}

/**
 * The discovery document (RFC 8414), a public document: at the spec's /api/oauth/.well-known/oauth-authorization-server
 * and at the RFC 8414 location /.well-known/oauth-authorization-server (CONTRACT §5).
 */
export function createDiscoveryRouter(deps: RouteDeps) {
  return declareRouter(deps, [
    metadataRoute(
      deps,
      {
        path: '/oauth-authorization-server',
        summary: 'Discovery document (RFC 8414 metadata)',
        tags: ['OAuth 2.0'],
        description: 'RFC 8414 metadata',
        schema: discoveryBody,
      },
      buildDiscoveryDocument,
    ),
  ]);
}

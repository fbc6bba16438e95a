import { Router, type Request, type Response } from 'express';
import { bearerTokenOf, principalOf, resolvePrincipal } from '../../middleware/authenticate';
import { validate } from '../../middleware/validate';
import { OAuthError } from '../../errors';
import { startAuthorization } from '../../services/oauth/authorize.service';
import { authenticateClient } from '../../services/oauth/client-auth.service';
import { approveAuthorization, denyAuthorization, getConsentInfo } from '../../services/oauth/consent.service';
import { buildDiscoveryDocument } from '../../services/oauth/discovery.service';
import { revokeToken } from '../../services/oauth/revoke.service';
import { requireParam } from '../../services/oauth/params';
import { grantTokens } from '../../services/oauth/token.service';
import { getUserInfo, invalidToken } from '../../services/oauth/userinfo.service';
import { renderOAuthErrorPage } from '../../views/consent';
import { requestMeta } from '../auth/auth.router';
import type { RouteDeps } from '../types';
import { consentRequestBody, parseOAuthParams, revokeParams, tokenParams } from './oauth.schemas';

/** The query string of the request as sent, with its leading `?` (empty when there is none). */
export function rawQueryOf(req: Request): string {
  const i = req.originalUrl.indexOf('?');
  return i < 0 ? '' : req.originalUrl.slice(i);
}

/** RFC 6749 §5.1: token responses (and their errors) must not be cached. */
function noStore(res: Response): void {
  res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });
}

/** OAuth 2.0 endpoints (spec §4.3, CONTRACT §5). */
export function createOAuthRouter({ ctx, authenticate }: RouteDeps): Router {
  const router = Router();
  const discovery = buildDiscoveryDocument(ctx.config);

  router.get('/authorize', authenticate({ optional: true, refreshFromCookie: true }), async (req, res) => {
    noStore(res);
    const authorizeUrl = `${ctx.config.baseUrl}/api/oauth/authorize${rawQueryOf(req)}`;
    const outcome = await startAuthorization(ctx, req.query as Record<string, unknown>, req.principal, authorizeUrl);
    if (outcome.kind === 'redirect') return res.redirect(302, outcome.url);
    // RFC 6749 §4.1.2.1: the client or redirect URI is not verified, so the error is shown here, never redirected.
    if (req.accepts(['json', 'html']) === 'html') {
      return res.status(400).type('html').send(renderOAuthErrorPage({ title: 'This sign-in link is not valid', message: outcome.description }));
    }
    throw new OAuthError(outcome.error, outcome.description, { status: 400 });
  });

  router.get('/consent-info', authenticate(), validate({ query: consentRequestBody }), async (req, res) => {
    const { request_id } = req.query as unknown as { request_id: string };
    const info = await getConsentInfo(ctx, principalOf(req), request_id);
    res.set('Cache-Control', 'no-store').json({
      request_id: info.request.id,
      client: { client_id: info.client.clientId, name: info.client.name },
      scopes: info.scopes,
      redirect_uri: info.request.redirectUri,
    });
  });

  router.post('/authorize/approve', authenticate(), validate({ body: consentRequestBody }), async (req, res) => {
    const redirectUrl = await approveAuthorization(ctx, principalOf(req), req.body.request_id);
    res.set('Cache-Control', 'no-store').json({ redirect_url: redirectUrl });
  });

  router.post('/authorize/deny', authenticate(), validate({ body: consentRequestBody }), async (req, res) => {
    const redirectUrl = await denyAuthorization(ctx, principalOf(req), req.body.request_id);
    res.set('Cache-Control', 'no-store').json({ redirect_url: redirectUrl });
  });

  /** client_secret_basic or client_secret_post (RFC 6749 §2.3.1), shared by the token and revocation endpoints. */
  const authenticatedClient = (req: Request, params: { client_id?: unknown; client_secret?: unknown }) =>
    authenticateClient(ctx, { authorization: req.headers.authorization, clientId: params.client_id, clientSecret: params.client_secret });

  router.post('/token', async (req, res) => {
    noStore(res);
    const params = parseOAuthParams(tokenParams, req.body);
    const client = await authenticatedClient(req, params);
    const tokens = await grantTokens(
      ctx,
      client,
      {
        grantType: params.grant_type,
        code: params.code,
        redirectUri: params.redirect_uri,
        codeVerifier: params.code_verifier,
        refreshToken: params.refresh_token,
        scope: params.scope,
      },
      requestMeta(req),
    );
    res.json(tokens);
  });

  const userinfo = async (req: Request, res: Response) => {
    noStore(res);
    const token = bearerTokenOf(req);
    if (!token) {
      throw new OAuthError('invalid_token', 'A Bearer access token is required', { headers: { 'WWW-Authenticate': 'Bearer' } });
    }
    const principal = await resolvePrincipal(ctx, token);
    if (!principal) throw invalidToken();
    res.json(await getUserInfo(ctx, principal));
  };
  router.get('/userinfo', userinfo);
  router.post('/userinfo', userinfo);

  router.post('/revoke', async (req, res) => {
    noStore(res);
    const params = parseOAuthParams(revokeParams, req.body);
    const client = await authenticatedClient(req, params);
    await revokeToken(ctx, client, { token: requireParam(params.token, 'token'), tokenTypeHint: params.token_type_hint });
    res.status(200).end();
  });

  router.get('/.well-known/oauth-authorization-server', (_req, res) => {
    res.set('Cache-Control', 'public, max-age=300').json(discovery);
  });

  return router;
}

/** Discovery document at the RFC 8414 location /.well-known/oauth-authorization-server (CONTRACT §5). */
export function createDiscoveryRouter({ ctx }: RouteDeps): Router {
  const router = Router();
  const discovery = buildDiscoveryDocument(ctx.config);
  router.get('/oauth-authorization-server', (_req, res) => {
    res.set('Cache-Control', 'public, max-age=300').json(discovery);
  });
  return router;
}

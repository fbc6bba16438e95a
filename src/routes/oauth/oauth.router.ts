import { Router, type Request, type Response } from 'express';
import { principalOf, resolvePrincipal } from '../../middleware/authenticate';
import { validate } from '../../middleware/validate';
import { OAuthError } from '../../errors';
import { startAuthorization } from '../../services/oauth/authorize.service';
import { authenticateClient } from '../../services/oauth/client-auth.service';
import { approveAuthorization, denyAuthorization, getConsentInfo } from '../../services/oauth/consent.service';
import { buildDiscoveryDocument } from '../../services/oauth/discovery.service';
import { revokeToken } from '../../services/oauth/revoke.service';
import { exchangeAuthorizationCode, refreshAccessToken } from '../../services/oauth/token.service';
import { getUserInfo, invalidToken } from '../../services/oauth/userinfo.service';
import { renderOAuthErrorPage } from '../../views/consent';
import { requestMeta } from '../auth/auth.router';
import type { RouteDeps } from '../types';
import { consentRequestBody, parseOAuthParams, requireParam, revokeParams, tokenParams } from './oauth.schemas';

/** The query string of the request as sent, with its leading `?` (empty when there is none). */
export function rawQueryOf(req: Request): string {
  const i = req.originalUrl.indexOf('?');
  return i < 0 ? '' : req.originalUrl.slice(i);
}

/** RFC 6749 §5.1: token responses (and their errors) must not be cached. */
function noStore(res: Response): void {
  res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });
}

function bearerOf(req: Request): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
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

  router.post('/token', async (req, res) => {
    noStore(res);
    const params = parseOAuthParams(tokenParams, req.body);
    const client = await authenticateClient(ctx, {
      authorization: req.headers.authorization,
      clientId: params.client_id,
      clientSecret: params.client_secret,
    });
    const grantType = requireParam(params.grant_type, 'grant_type');
    if (grantType === 'authorization_code') {
      const tokens = await exchangeAuthorizationCode(
        ctx,
        client,
        {
          code: requireParam(params.code, 'code'),
          redirectUri: requireParam(params.redirect_uri, 'redirect_uri'),
          codeVerifier: requireParam(params.code_verifier, 'code_verifier'),
        },
        requestMeta(req),
      );
      return res.json(tokens);
    }
    if (grantType === 'refresh_token') {
      const tokens = await refreshAccessToken(
        ctx,
        client,
        { refreshToken: requireParam(params.refresh_token, 'refresh_token'), scope: params.scope },
        requestMeta(req),
      );
      return res.json(tokens);
    }
    throw new OAuthError('unsupported_grant_type', 'Supported grant types: authorization_code, refresh_token');
  });

  const userinfo = async (req: Request, res: Response) => {
    noStore(res);
    const token = bearerOf(req);
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
    const client = await authenticateClient(ctx, {
      authorization: req.headers.authorization,
      clientId: params.client_id,
      clientSecret: params.client_secret,
    });
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

import { Router, type Request } from 'express';
import { clearSessionCookies, REFRESH_COOKIE, setSessionCookies } from '../../middleware/session-cookies';
import { principalOf } from '../../middleware/authenticate';
import { requireAllowedOrigin } from '../../middleware/origin-check';
import { requireRole } from '../../middleware/authorize';
import { validate } from '../../middleware/validate';
import * as auth from '../../services/auth.service';
import type { RequestMeta } from '../../services/context';
import { ADMIN_TIER } from '../../services/principal';
import type { RouteDeps } from '../types';
import { presentAuthUser, presentPrincipal } from './auth.presenters';
import { loginBody, refreshBody, registerBody, updateMeBody } from './auth.schemas';

export function requestMeta(req: Request): RequestMeta {
  return { ip: req.ip ?? null, userAgent: req.get('user-agent') ?? null };
}

/** Accounts and first-party sessions (spec §4.2, CONTRACT §4). */
export function createAuthRouter({ ctx, authenticate }: RouteDeps): Router {
  const router = Router();
  router.use(['/register', '/login', '/refresh-token'], requireAllowedOrigin(ctx.config));

  router.post('/register', validate({ body: registerBody }), async (req, res) => {
    const { user, tokens } = await auth.register(ctx, req.body, requestMeta(req));
    setSessionCookies(res, ctx.config, tokens);
    res.status(201).json({
      user: presentAuthUser(user, tokens.access),
      accessToken: tokens.accessToken,
      refreshToken: tokens.refreshToken,
    });
  });

  router.post('/login', validate({ body: loginBody }), async (req, res) => {
    const { user, tokens } = await auth.login(ctx, req.body, requestMeta(req));
    setSessionCookies(res, ctx.config, tokens);
    res.json({
      user: presentAuthUser(user, tokens.access),
      accessToken: tokens.accessToken,
      refreshToken: tokens.refreshToken,
    });
  });

  router.get('/me', authenticate({ allowClientTokens: true }), (req, res) => {
    res.json({ user: presentPrincipal(principalOf(req)) });
  });

  router.put('/me', authenticate(), validate({ body: updateMeBody }), async (req, res) => {
    const principal = await auth.updateProfile(ctx, principalOf(req), req.body);
    res.json({ user: presentPrincipal(principal) });
  });

  router.post('/refresh-token', validate({ body: refreshBody }), async (req, res) => {
    const cookie: unknown = req.cookies?.[REFRESH_COOKIE];
    const presented = (typeof cookie === 'string' ? cookie : undefined) ?? req.body?.refreshToken;
    const tokens = await auth.refresh(ctx, presented, requestMeta(req));
    setSessionCookies(res, ctx.config, tokens);
    res.json({ accessToken: tokens.accessToken, refreshToken: tokens.refreshToken });
  });

  router.post('/logout', authenticate({ allowClientTokens: true }), async (req, res) => {
    await auth.logout(ctx, principalOf(req).sessionId);
    clearSessionCookies(res, ctx.config);
    res.json({ success: true });
  });

  router.get('/verify-admin', authenticate({ allowClientTokens: true }), requireRole(...ADMIN_TIER), (req, res) => {
    res.json({ user: presentPrincipal(principalOf(req)) });
  });

  return router;
}

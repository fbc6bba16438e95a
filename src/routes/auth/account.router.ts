import { Router } from 'express';
import { principalOf } from '../../middleware/authenticate';
import { clearSessionCookies } from '../../middleware/session-cookies';
import { validate } from '../../middleware/validate';
import type { SessionRow } from '../../db/repositories/sessions.repo';
import { notFound } from '../../errors';
import * as account from '../../services/account.service';
import { normalizeEmail } from '../../services/auth.service';
import * as links from '../../services/email-links.service';
import * as loginTargets from '../../services/login-targets.service';
import type { RouteDeps } from '../types';
import {
  changePasswordBody,
  emailBody,
  linkTokenBody,
  loginRequestBody,
  loginResolveBody,
  loginTargetQuery,
  sessionIdParam,
  setPasswordBody,
} from './account.schemas';

/** One session of GET /api/auth/sessions (CONTRACT §4); fields listed one by one. */
export function presentSession(session: SessionRow, currentSessionId: string) {
  return {
    id: session.id,
    created_at: session.createdAt.toISOString(),
    last_used_at: session.lastUsedAt.toISOString(),
    expires_at: session.expiresAt.toISOString(),
    ip: session.ip,
    user_agent: session.userAgent,
    client_id: session.clientId,
    current: session.id === currentSessionId,
  };
}

/** Account self-service: sessions, password, email links, post-login destinations (spec §4.2, CONTRACT §4). */
export function createAccountRouter({ ctx, authenticate }: RouteDeps): Router {
  const router = Router();

  router.get('/sessions', authenticate(), async (req, res) => {
    const principal = principalOf(req);
    const sessions = await account.listOwnSessions(ctx, principal);
    res.json({ sessions: sessions.map((s) => presentSession(s, principal.sessionId)) });
  });

  router.post('/sessions/revoke-others', authenticate(), async (req, res) => {
    res.json({ revoked: await account.revokeOtherSessions(ctx, principalOf(req)) });
  });

  router.delete('/sessions/:sessionId', authenticate(), async (req, res) => {
    // A malformed id cannot be one of the caller's sessions: the same 404 as another user's.
    const params = sessionIdParam.safeParse(req.params);
    if (!params.success) throw notFound('Session');
    const { current } = await account.revokeOwnSession(ctx, principalOf(req), params.data.sessionId);
    if (current && req.authMethod === 'cookie') clearSessionCookies(res, ctx.config);
    res.status(204).end();
  });

  router.post('/change-password', authenticate(), validate({ body: changePasswordBody }), async (req, res) => {
    await account.changePassword(ctx, principalOf(req), req.body);
    res.json({ success: true });
  });

  router.post('/verify-email', validate({ body: linkTokenBody }), async (req, res) => {
    const link = await links.inspectEmailLink(ctx, req.body.token);
    res.json({ valid: true, email: link.email, purpose: link.purpose });
  });

  // Beyond the spec: marks the address verified and burns the verification link, password untouched.
  router.post('/verify-email/confirm', validate({ body: linkTokenBody }), async (req, res) => {
    const { email } = await links.confirmEmailWithLink(ctx, req.body.token);
    res.json({ success: true, email, email_verified: true });
  });

  router.post('/verify-email/resend', validate({ body: emailBody }), async (req, res) => {
    await links.requestVerificationResend(ctx, normalizeEmail(req.body.email));
    res.status(202).json({ success: true });
  });

  router.post('/set-password', validate({ body: setPasswordBody }), async (req, res) => {
    await links.setPasswordWithLink(ctx, req.body.token, req.body.password);
    res.json({ success: true });
  });

  router.post('/forgot-password', validate({ body: emailBody }), async (req, res) => {
    await links.requestPasswordReset(ctx, normalizeEmail(req.body.email));
    res.status(202).json({ success: true });
  });

  router.get('/login-target', validate({ query: loginTargetQuery }), (req, res) => {
    res.json({ url: loginTargets.resolveTarget(ctx, req.query) });
  });

  router.post('/login-request', validate({ body: loginRequestBody }), async (req, res) => {
    const { loginToken, expiresIn } = await loginTargets.createLoginRequest(ctx, req.body);
    res.set('Cache-Control', 'no-store');
    res.json({ login_token: loginToken, expires_in: expiresIn });
  });

  router.post('/login-resolve', validate({ body: loginResolveBody }), async (req, res) => {
    const url = await loginTargets.resolveLoginRequest(ctx, req.body.login_token);
    res.set('Cache-Control', 'no-store');
    res.json({ url });
  });

  return router;
}

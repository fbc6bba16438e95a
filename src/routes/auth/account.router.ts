import type { SessionRow } from '../../db/repositories/sessions.repo';
import { conflict, notFound } from '../../errors';
import { clearedSessionCookies } from '../../middleware/session-cookies';
import * as account from '../../services/account.service';
import { normalizeEmail } from '../../services/auth.service';
import * as links from '../../services/email-links.service';
import * as loginTargets from '../../services/login-targets.service';
import type { ServiceContext } from '../../services/context';
import { successBody } from '../../wire/common.schemas';
import { declareRouter, replyOf, route } from '../route';
import type { RouteDeps } from '../types';
import {
  changePasswordBody,
  emailBody,
  emailConfirmedBody,
  linkInfoBody,
  linkTokenBody,
  loginRequestBody,
  loginResolveBody,
  loginTargetQuery,
  loginTokenBody,
  revokedCountBody,
  sessionIdParam,
  sessionsBody,
  setPasswordBody,
  urlBody,
} from '../../wire/auth/account.schemas';

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
export function createAccountRouter(deps: RouteDeps) {
  /** A mail asked for by address: 202 whether or not the address has an account (no enumeration). */
  const mailRequest = (path: string, summary: string, send: (ctx: ServiceContext, email: string) => Promise<void>) =>
    route(
      {
        method: 'post',
        path,
        summary,
        auth: 'none',
        body: emailBody,
        response: { status: 202, description: '{ success: true }', schema: successBody },
      },
      async ({ body, ctx }) => {
        await send(ctx, normalizeEmail(body.email));
        return { success: true };
      },
    );
  return declareRouter(
    deps,
    [
      route(
        {
          method: 'get',
          path: '/sessions',
          summary: 'Own active sessions',
          auth: 'user',
          response: {
            description: '{ sessions: [{ id, created_at, last_used_at, expires_at, ip, user_agent, client_id, current }] }',
            schema: sessionsBody,
          },
        },
        async ({ principal, ctx }) => ({
          sessions: (await account.listOwnSessions(ctx, principal)).map((s) => presentSession(s, principal.sessionId)),
        }),
      ),
      route(
        {
          method: 'post',
          path: '/sessions/revoke-others',
          summary: 'Sign out every other session',
          auth: 'user',
          response: { description: '{ revoked: n }', schema: revokedCountBody },
        },
        async ({ principal, ctx }) => ({ revoked: await account.revokeOtherSessions(ctx, principal) }),
      ),
      route(
        {
          method: 'delete',
          path: '/sessions/:sessionId',
          summary: 'Revoke one own session',
          auth: 'user',
          params: sessionIdParam,
          // A malformed id cannot be one of the caller's sessions: the same 404 as another user's.
          invalid: () => notFound('Session'),
          response: { status: 204, description: 'Revoked', kind: 'empty' },
        },
        async ({ principal, params, ctx }, req) => {
          const { current } = await account.revokeOwnSession(ctx, principal, params.sessionId);
          // The browser's own session ended: its cookies go with it.
          return replyOf(undefined).withCookies(...(current && req.authMethod === 'cookie' ? clearedSessionCookies(ctx.config) : []));
        },
      ),
      route(
        {
          method: 'post',
          path: '/change-password',
          summary: 'Change own password; revokes every other session',
          auth: 'user',
          body: changePasswordBody,
          response: { description: '{ success: true }', schema: successBody },
          errors: [401],
        },
        async ({ principal, body, ctx }) => {
          await account.changePassword(ctx, principal, body);
          return { success: true };
        },
      ),
      route(
        {
          method: 'post',
          path: '/verify-email',
          summary: 'Validate an email link without consuming it',
          auth: 'none',
          body: linkTokenBody,
          response: { description: '{ valid: true, email, purpose }', schema: linkInfoBody },
        },
        async ({ body, ctx }) => {
          const link = await links.inspectEmailLink(ctx, body.token);
          return { valid: true, email: link.email, purpose: link.purpose };
        },
      ),
      route(
        {
          method: 'post',
          path: '/verify-email/confirm',
          summary: 'Mark the address verified and burn the verification link; ends every session of the account (beyond the spec)',
          description:
            'An account that was never verified, confirmed by a caller not signed in as it, answers 409 and changes nothing: ' +
            'choose a password with POST /api/auth/set-password and the same token (CONTRACT §8).',
          auth: 'browser',
          body: linkTokenBody,
          response: { description: '{ success: true, email, email_verified: true }', schema: emailConfirmedBody },
          errors: [409],
        },
        async ({ body, principal, ctx }, req) => {
          const signedInUserId = principal && !principal.clientId ? principal.userId : undefined;
          const result = await links.confirmEmailWithLink(ctx, body.token, { signedInUserId });
          if (!result.confirmed) {
            throw conflict('This account was never verified: choose a password with POST /api/auth/set-password and this token');
          }
          const endedHere = req.authMethod === 'cookie' && signedInUserId === result.userId;
          return replyOf({ success: true, email: result.email, email_verified: true }).withCookies(
            ...(endedHere ? clearedSessionCookies(ctx.config) : []),
          );
        },
      ),
      mailRequest(
        '/verify-email/resend',
        'Resend the verification email (same answer for unknown addresses)',
        links.requestVerificationResend,
      ),
      route(
        {
          method: 'post',
          path: '/set-password',
          summary: 'Set the password from an email link; marks the address verified',
          auth: 'none',
          body: setPasswordBody,
          response: { description: '{ success: true }', schema: successBody },
        },
        async ({ body, ctx }) => {
          await links.setPasswordWithLink(ctx, body.token, body.password);
          return { success: true };
        },
      ),
      mailRequest(
        '/forgot-password',
        'Email a set-password link (beyond the spec; same answer for unknown addresses)',
        links.requestPasswordReset,
      ),
      route(
        {
          method: 'get',
          path: '/login-target',
          summary: 'Resolve an allow-listed post-login destination (query app=, redirect_to= or path=)',
          auth: 'none',
          query: loginTargetQuery,
          response: { description: '{ url }', schema: urlBody },
        },
        ({ query, ctx }) => ({ url: loginTargets.resolveTarget(ctx, query) }),
      ),
      route(
        {
          method: 'post',
          path: '/login-request',
          summary: 'Mint a single-use login token bound to a destination',
          auth: 'none',
          noStore: true,
          body: loginRequestBody,
          response: { description: '{ login_token, expires_in: 300 }', schema: loginTokenBody },
        },
        async ({ body, ctx }) => {
          const { loginToken, expiresIn } = await loginTargets.createLoginRequest(ctx, body);
          return { login_token: loginToken, expires_in: expiresIn };
        },
      ),
      route(
        {
          method: 'post',
          path: '/login-resolve',
          summary: 'Redeem a login token',
          auth: 'none',
          noStore: true,
          body: loginResolveBody,
          response: { description: '{ url }', schema: urlBody },
        },
        async ({ body, ctx }) => ({ url: await loginTargets.resolveLoginRequest(ctx, body.login_token) }),
      ),
    ],
    { tags: ['Account'] },
  );
}

import { clearedSessionCookies, REFRESH_COOKIE, sessionCookies } from '../../middleware/session-cookies';
import * as auth from '../../services/auth.service';
import { forbidden } from '../../errors';
import { ADMIN_TIER, scopeAllows } from '../../services/principal';
import { successBody } from '../../wire/common.schemas';
import { replyOf, route, routerOf } from '../route';
import { presentPrincipal, presentPrincipalForToken } from './auth.presenters';
import { requestMeta, signedIn, signedInOrSecondStep } from '../shared';
import {
  authResult,
  authUserEnvelope,
  loginBody,
  mfaRequiredBody,
  refreshBody,
  registerBody,
  tokenPair,
  tokenUserEnvelope,
  updateMeBody,
} from '../../wire/auth/auth.schemas';

/** Accounts and first-party sessions (spec §4.2, CONTRACT §4). Token responses are never cached. */
export const createAuthRouter = routerOf(
  () => [
    route(
      {
        method: 'post',
        path: '/register',
        summary: 'Register; returns tokens and sets the SSO cookies',
        auth: 'none',
        originCheck: true,
        noStore: true,
        body: registerBody,
        response: { status: 201, description: 'Signed in', schema: authResult },
        // 403 registration_closed when REGISTRATION=closed (CONTRACT §15).
        errors: [403, 409],
      },
      async ({ body, ctx }, req) => signedIn(ctx.config, await auth.register(ctx, body, requestMeta(req))),
    ),
    route(
      {
        method: 'post',
        path: '/login',
        summary: 'Sign in with email and password',
        auth: 'none',
        originCheck: true,
        noStore: true,
        body: loginBody,
        response: { description: 'Signed in', schema: authResult },
        errors: [401],
        errorBodies: {
          401: {
            description: 'invalid_credentials, or mfa_required with the mfa_token of the second step (CONTRACT §10)',
            schema: mfaRequiredBody,
          },
        },
      },
      async ({ body, ctx }, req) => signedInOrSecondStep(ctx.config, await auth.login(ctx, body, requestMeta(req))),
    ),
    route(
      {
        method: 'get',
        path: '/me',
        summary: 'The caller with live roles and permissions',
        description:
          'A token issued to an OAuth client sees only the fields its scope allows (CONTRACT §8). A DPoP-bound token (RFC 9449) ' +
          'only as Authorization: DPoP <token> with a `DPoP` proof header (htm, htu, ath) of its key; as Bearer it is 401 with ' +
          'WWW-Authenticate: DPoP error="invalid_token" (docs/dpop.md).',
        auth: 'user-or-client',
        // Issue 19: the caller's identity and permissions, never kept by a cache.
        noStore: true,
        response: { description: '{ user }', schema: tokenUserEnvelope },
      },
      ({ principal }) => ({ user: presentPrincipalForToken(principal) }),
    ),
    route(
      {
        method: 'put',
        path: '/me',
        summary: 'Update own name',
        auth: 'user',
        body: updateMeBody,
        response: { description: '{ user }', schema: authUserEnvelope },
      },
      async ({ principal, body, ctx }) => ({ user: presentPrincipal(await auth.updateProfile(ctx, principal, body)) }),
    ),
    route(
      {
        method: 'post',
        path: '/refresh-token',
        summary: 'Rotate the refresh token (refreshToken cookie, else body { refreshToken })',
        auth: 'none',
        originCheck: true,
        noStore: true,
        body: refreshBody,
        bodyOptional: true,
        response: { description: '{ accessToken, refreshToken } and new cookies', schema: tokenPair },
        errors: [401, 503],
      },
      async ({ body, ctx }, req) => {
        const cookie: unknown = req.cookies?.[REFRESH_COOKIE];
        const presented = (typeof cookie === 'string' ? cookie : undefined) ?? body?.refreshToken;
        const tokens = await auth.refresh(ctx, presented, requestMeta(req));
        const pair = { accessToken: tokens.accessToken, refreshToken: tokens.refreshToken };
        return replyOf(pair).withCookies(...sessionCookies(ctx.config, tokens));
      },
    ),
    route(
      {
        method: 'post',
        path: '/logout',
        summary: 'Revoke the session and clear the cookies',
        auth: 'user-or-client',
        response: { description: '{ success: true }', schema: successBody },
      },
      async ({ principal, ctx }) => {
        await auth.logout(ctx, principal.sessionId);
        return replyOf({ success: true }).withCookies(...clearedSessionCookies(ctx.config));
      },
    ),
    route(
      {
        method: 'get',
        path: '/verify-admin',
        summary: 'Identity if the caller holds admin, super_admin or manager',
        auth: 'user-or-client',
        role: ADMIN_TIER,
        description: 'A token issued to an OAuth client also needs the `read` scope (CONTRACT §8).',
        response: { description: '{ user }', schema: tokenUserEnvelope },
      },
      ({ principal }) => {
        if (!scopeAllows(principal, 'read')) throw forbidden('A client token needs the read scope for verify-admin');
        return { user: presentPrincipalForToken(principal) };
      },
    ),
  ],
  { tags: ['Auth'] },
);

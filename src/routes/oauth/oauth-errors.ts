import type { ErrorRequestHandler } from 'express';
import { OAuthError, type ErrorCode, type OAuthErrorCode } from '../../errors';
import { RETRY_AFTER_UNAVAILABLE, toAppError } from '../../middleware/error-handler';
import { listRouterRoutes } from '../route-table';

/**
 * How the contract's error codes read on the OAuth protocol endpoints (RFC 6749 §5.2, RFC 7009 §2.2.1,
 * RFC 6750 §3.1). The HTTP status is kept: a rate-limited token request is still 429, a too-large body 413, an
 * unreachable database 503. Every code must be listed, so a new one cannot slip through untranslated.
 */
export const OAUTH_DIALECT: Readonly<Record<ErrorCode, OAuthErrorCode>> = {
  validation_error: 'invalid_request',
  invalid_target: 'invalid_request',
  invalid_credentials: 'invalid_client',
  mfa_required: 'access_denied',
  unauthorized: 'invalid_client',
  forbidden: 'invalid_request',
  reauthentication_required: 'access_denied',
  reauthentication_failed: 'access_denied',
  registration_closed: 'access_denied',
  not_found: 'invalid_request',
  conflict: 'invalid_request',
  payload_too_large: 'invalid_request',
  rate_limited: 'invalid_request',
  too_many_attempts: 'invalid_request',
  internal_error: 'server_error',
  service_unavailable: 'temporarily_unavailable',
};

/** Any error as the OAuth error it stands for; an unknown error (a bug) is a 500 server_error. */
export function toOAuthError(err: unknown): OAuthError {
  if (err instanceof OAuthError) return err;
  const appError = toAppError(err);
  if (!appError) return new OAuthError('server_error', 'Internal server error', { cause: err });
  const headers = { ...appError.headers, ...(appError.code === 'service_unavailable' ? { 'Retry-After': RETRY_AFTER_UNAVAILABLE } : {}) };
  // A validation failure names its first problem, as RFC 6749's error_description is one human-readable line.
  const description = appError.code === 'validation_error' ? (appError.details?.[0]?.message ?? appError.message) : appError.message;
  return new OAuthError(OAUTH_DIALECT[appError.code], description, { status: appError.status, headers, cause: err });
}

/**
 * The OAuth router's error boundary, mounted right after it: errors of the routes declared with `dialect: 'oauth'`
 * (token, revoke, userinfo) are translated by the table above, whether they were raised inside the route or before
 * it (the /api rate limit, the body parser). Every other route keeps the contract's dialect.
 */
export function oauthErrorBoundary(router: { stack: unknown }): ErrorRequestHandler {
  const dialectRoutes = new Set(
    listRouterRoutes(router)
      .filter((r) => r.decl?.dialect === 'oauth')
      .map((r) => `${r.method} ${r.path.toLowerCase()}`),
  );
  return (err, req, _res, next) => {
    const method = req.method === 'HEAD' ? 'get' : req.method.toLowerCase();
    const path = req.path.replace(/\/+$/, '').toLowerCase() || '/';
    next(dialectRoutes.has(`${method} ${path}`) ? toOAuthError(err) : err);
  };
}

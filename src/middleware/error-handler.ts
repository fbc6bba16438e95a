import type { ErrorRequestHandler, RequestHandler } from 'express';
import { isConnectionError, mapDbError } from '../db/pg-errors';
import { AppError, notFound, OAuthError } from '../errors';
import type { Logger } from '../lib/logger';

const OAUTH_JSON_PATHS = /^\/api\/oauth\/(token|revoke|userinfo)\b/;

export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(notFound(`Route ${req.method} ${req.path}`));
};

/** The single place that writes error bodies (CONTRACT §2). Never a stack trace or SQL text. */
export function createErrorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    const isOAuthEndpoint = OAUTH_JSON_PATHS.test(req.path);

    if (err instanceof OAuthError) {
      if (err.headers) res.set(err.headers);
      res.set('Cache-Control', 'no-store');
      return res.status(err.status).json({ error: err.error, error_description: err.description });
    }

    let appError: AppError | undefined;
    const bodyParserType = (err as { type?: string })?.type;
    if (err instanceof AppError) appError = err;
    else if (bodyParserType === 'entity.parse.failed') appError = new AppError('validation_error', 'Malformed JSON body');
    else if (bodyParserType === 'entity.too.large') appError = new AppError('payload_too_large', 'Request body is too large');
    else if (typeof bodyParserType === 'string' && (err as { status?: number }).status === 400) {
      appError = new AppError('validation_error', 'Unreadable request body');
    } else if (bodyParserType === 'encoding.unsupported' || bodyParserType === 'charset.unsupported') {
      appError = new AppError('validation_error', 'Unsupported body encoding', { status: 415 });
    } else {
      const mapped = mapDbError(err);
      if (mapped instanceof AppError) appError = mapped;
    }

    if (appError && isOAuthEndpoint && (appError.code === 'service_unavailable' || appError.status >= 400)) {
      const error =
        appError.code === 'service_unavailable' ? 'temporarily_unavailable' : appError.status === 401 ? 'invalid_client' : 'invalid_request';
      if (appError.code === 'service_unavailable') logger.warn({ reqId: req.id, err: describe(err) }, 'database unavailable');
      res.set('Cache-Control', 'no-store');
      if (appError.code === 'service_unavailable') res.set('Retry-After', '5');
      return res.status(appError.status).json({ error, error_description: appError.message });
    }

    if (appError) {
      if (appError.headers) res.set(appError.headers);
      if (appError.code === 'service_unavailable') {
        res.set('Retry-After', '5');
        logger.warn({ reqId: req.id, err: describe(err) }, 'database unavailable');
      }
      const body: Record<string, unknown> = { error: appError.code, message: appError.message };
      if (appError.details) body.details = appError.details;
      return res.status(appError.status).json(body);
    }

    logger.error({ reqId: req.id, err: describe(err), dbDown: isConnectionError(err) }, 'unhandled error');
    if (isOAuthEndpoint) {
      return res.status(500).json({ error: 'server_error', error_description: 'Internal server error' });
    }
    res.status(500).json({ error: 'internal_error', message: 'Internal server error' });
  };
}

/** Error details for the log: message, code and stack, never request data. */
function describe(err: unknown): Record<string, unknown> {
  const e = err as { message?: string; code?: string; stack?: string; name?: string };
  return { name: e?.name, message: e?.message, code: e?.code, stack: e?.stack };
}

import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import type { LiveSettings } from '../services/settings/live-settings';
import { isConnectionError, mapDbError } from '../db/pg-errors';
import { AppError, notFound, OAuthError, SCIM_MEDIA_TYPE, ScimProblem } from '../errors';
import { jsonDocument, writeDocument } from '../http/outcome';
import type { Logger } from '../lib/logger';
import { runInRequest } from '../lib/request-context';
import { thrownField, thrownString } from '../lib/thrown';
import { pageEnvFor } from './page-env';

export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(notFound(`Route ${req.method} ${req.path}`));
};

/**
 * The contract error an error stands for, when it is one: an AppError, a body-parser failure, or a database error
 * with a known meaning (connection lost -> service_unavailable, bad identifier -> validation_error). Undefined for
 * anything else, which is a bug (500).
 */
export function toAppError(err: unknown): AppError | undefined {
  if (err instanceof AppError) return err;
  // CONTRACT §8: a path parameter with a malformed percent-escape (`/api/users/%E0%A4%A`) is the client's error.
  if (err instanceof URIError) return new AppError('validation_error', 'Malformed percent-encoding in the URL');
  const bodyParserType = thrownString(err, 'type');
  // More than 1000 form parameters (body-parser's parameterLimit, CONTRACT §8).
  if (bodyParserType === 'parameters.too.many') return new AppError('payload_too_large', 'Too many form parameters (at most 1000)');
  if (bodyParserType === 'entity.parse.failed') return new AppError('validation_error', 'Malformed JSON body');
  if (bodyParserType === 'entity.too.large') return new AppError('payload_too_large', 'Request body is too large');
  if (bodyParserType !== undefined && thrownField(err, 'status') === 400) {
    return new AppError('validation_error', 'Unreadable request body');
  }
  if (bodyParserType === 'encoding.unsupported' || bodyParserType === 'charset.unsupported') {
    return new AppError('validation_error', 'Unsupported body encoding', { status: 415 });
  }
  const mapped = mapDbError(err);
  return mapped instanceof AppError ? mapped : undefined;
}

/** RFC 7644 §3.12: the schema of every SCIM error body. */
export const SCIM_ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

/** Retry-After of a 503 service_unavailable (the database is expected back soon). */
export const RETRY_AFTER_UNAVAILABLE = '5';

/**
 * The single place that writes error bodies (CONTRACT §2). Never a stack trace or SQL text. Errors arrive in the
 * contract's dialect `{ error, message, details? }`, or already in the OAuth dialect `{ error, error_description }`
 * when a router translated them at its boundary (src/routes/oauth/oauth-errors.ts), or in SCIM's (src/routes/scim/scim-errors.ts).
 */
/** Draws the error page a browser gets (src/views/errors.tsx), given by the app so that this handler imports no view. */
export type ErrorPageRenderer = (status: number, retryAfterSeconds?: number) => string;

export function createErrorHandler(logger: Logger, settings: LiveSettings, renderErrorPage: ErrorPageRenderer): ErrorRequestHandler {
  /** CONTRACT §15: a browser outside the JSON API is answered with a page in its language, not a JSON body. */
  const sendError = (req: Request, res: Parameters<ErrorRequestHandler>[2], status: number, body: Record<string, unknown>) => {
    if (!wantsPage(req)) return res.status(status).json(body);
    req.pageEnv ??= pageEnvFor(req, settings.current);
    const retryAfter = Number(res.getHeader('Retry-After'));
    const page = runInRequest(req, () => renderErrorPage(status, Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined));
    res.status(status).set('Cache-Control', 'no-store').type('html').send(page);
  };
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);

    if (err instanceof OAuthError) {
      if (err.error === 'temporarily_unavailable') logger.warn({ reqId: req.id, err: describe(err.cause ?? err) }, 'database unavailable');
      else if (err.status >= 500)
        logger.error({ reqId: req.id, err: describe(err.cause ?? err), dbDown: isConnectionError(err.cause) }, 'unhandled error');
      if (err.headers) res.set(err.headers);
      res.set('Cache-Control', 'no-store');
      return res.status(err.status).json({ error: err.error, error_description: err.description });
    }

    if (err instanceof ScimProblem) {
      if (err.status >= 500 && err.status !== 503) {
        logger.error({ reqId: req.id, err: describe(err.cause ?? err), dbDown: isConnectionError(err.cause) }, 'unhandled error');
      }
      const body = {
        schemas: [SCIM_ERROR_SCHEMA],
        status: String(err.status),
        ...(err.scimType ? { scimType: err.scimType } : {}),
        detail: err.detail,
      };
      return writeDocument(jsonDocument(err.status, SCIM_MEDIA_TYPE, body).withHeaders(err.headers), res);
    }

    const appError = toAppError(err);
    if (appError) {
      if (appError.headers) res.set(appError.headers);
      if (appError.code === 'service_unavailable') {
        res.set('Retry-After', RETRY_AFTER_UNAVAILABLE);
        logger.warn({ reqId: req.id, err: describe(err) }, 'database unavailable');
      }
      const body: Record<string, unknown> = { error: appError.code, message: appError.message };
      // The public fields only: a detail's catalogue key (`said`) is for the HTML faces.
      if (appError.details) body.details = appError.details.map(({ said: _said, ...detail }) => detail);
      return sendError(req, res, appError.status, body);
    }

    logger.error({ reqId: req.id, err: describe(err), dbDown: isConnectionError(err) }, 'unhandled error');
    sendError(req, res, 500, { error: 'internal_error', message: 'Internal server error' });
  };
}

/** Paths that always answer in JSON (the API, discovery, probes, metrics), whatever the Accept header says. */
const JSON_ONLY = /^\/(api|\.well-known|health|metrics)(\/|$)/i;

/** A browser (`Accept: text/html` preferred over JSON) asking outside the JSON paths. */
export function wantsPage(req: Request): boolean {
  return !JSON_ONLY.test(req.path) && req.accepts(['json', 'html']) === 'html';
}

/** Error details for the log: message, code and stack, never request data. */
function describe(err: unknown): Record<string, unknown> {
  const field = (key: string) => thrownField(err, key);
  return { name: field('name'), message: field('message'), code: field('code'), stack: field('stack') };
}

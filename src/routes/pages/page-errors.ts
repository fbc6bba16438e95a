import type { ErrorRequestHandler } from 'express';
import { toAppError } from '../../middleware/error-handler';
import { runInRequest } from '../../lib/request-context';
import { renderOAuthErrorPage } from '../../views/consent';
import { pageEnv } from '../../views/env';
import { renderErrorPage } from '../../views/errors';
import { noStore } from '../route';
import { pageErrorMessage } from './page-messages';

/**
 * The error boundary of the pages scope (src/routes/index.ts): a person's browser gets a page, not the API's JSON body.
 * Over the per-IP limit of a form post the page says so (429, Retry-After kept); any other client error (a URL with
 * too many parameters, a body too large) is a 4xx page saying what its code means. A server error goes on to the app's error
 * handler, which logs it under the request id and answers 5xx in the contract's shape.
 */
export const pageErrors: ErrorRequestHandler = (err, req, res, next) => {
  const appError = toAppError(err);
  if (res.headersSent || !appError || appError.status >= 500) return next(err);
  if (appError.headers) res.set(appError.headers);
  noStore(res);
  if (appError.code === 'rate_limited') {
    const retryAfter = Number(appError.headers?.['Retry-After']);
    // The limiter's store may call back outside the request's async context: render inside it (language, brand).
    const page = runInRequest(req, () => renderErrorPage(429, Number.isFinite(retryAfter) ? retryAfter : undefined));
    return res.status(429).type('html').send(page);
  }
  const page = runInRequest(req, () => {
    const { t } = pageEnv();
    // The API's message is English (CONTRACT §2); the page says the catalogue's sentence for the code.
    return renderOAuthErrorPage({
      title: t.common.requestRefused,
      message: pageErrorMessage(t, appError, { validation_error: t.errors.badRequest }),
    });
  });
  res.status(appError.status).type('html').send(page);
};

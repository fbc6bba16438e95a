import type { ErrorRequestHandler } from 'express';
import { toAppError } from '../../middleware/error-handler';
import { runInRequest } from '../../lib/request-context';
import { renderOAuthErrorPage } from '../../views/consent';
import { pageEnv } from '../../views/env';
import { renderErrorPage } from '../../views/errors';
import { noStore } from '../route';
import { hostedPage, sendHostedPage } from './page-kit';
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
  noStore(res);
  // The limiter's store may call back outside the request's async context: render inside it (language, brand).
  const body = runInRequest(req, () => {
    if (appError.code === 'rate_limited') {
      const retryAfter = Number(appError.headers?.['Retry-After']);
      return renderErrorPage(429, Number.isFinite(retryAfter) ? retryAfter : undefined);
    }
    const { t } = pageEnv();
    // The API's message is English (CONTRACT §2); the page says the catalogue's sentence for the code.
    return renderOAuthErrorPage({
      title: t.common.requestRefused,
      message: pageErrorMessage(t, appError, { validation_error: t.errors.badRequest }),
    });
  });
  const status = appError.code === 'rate_limited' ? 429 : appError.status;
  sendHostedPage(hostedPage(() => body, status).withHeaders(appError.headers), res);
};

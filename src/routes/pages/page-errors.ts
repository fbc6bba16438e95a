import type { ErrorRequestHandler } from 'express';
import { toAppError } from '../../middleware/error-handler';
import { renderOAuthErrorPage } from '../../views/consent';
import { noStore } from '../route';

/**
 * The error boundary of the pages scope (src/routes/index.ts): a person's browser gets a page, not the API's JSON body.
 * Over the per-IP limit of a form post the page says so (429, Retry-After kept); any other client error (a URL with
 * too many parameters, a body too large) is a 4xx page with its message. A server error goes on to the app's error
 * handler, which logs it under the request id and answers 5xx in the contract's shape.
 */
export const pageErrors: ErrorRequestHandler = (err, _req, res, next) => {
  const appError = toAppError(err);
  if (res.headersSent || !appError || appError.status >= 500) return next(err);
  if (appError.headers) res.set(appError.headers);
  noStore(res);
  const page =
    appError.code === 'rate_limited'
      ? { title: 'Too many requests', message: 'Too many requests from your network. Wait a minute, then try again.' }
      : { title: 'Request refused', message: appError.message };
  res.status(appError.status).type('html').send(renderOAuthErrorPage(page));
};

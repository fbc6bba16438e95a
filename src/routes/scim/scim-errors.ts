import type { ErrorRequestHandler } from 'express';
import { ScimError, ScimProblem, type ScimType } from '../../errors';
import { RETRY_AFTER_UNAVAILABLE, toAppError } from '../../middleware/error-handler';

/**
 * Any error as the SCIM error it stands for (RFC 7644 §3.12). The status is kept (a too-large body stays 413, an
 * unreachable database 503); a SCIM service's error names its `scimType`; a validation problem without one is
 * `invalidValue` (or `invalidSyntax` for an unreadable body); an unknown error (a bug) is a 500 without details.
 */
export function toScimProblem(err: unknown): ScimProblem {
  if (err instanceof ScimProblem) return err;
  const appError = toAppError(err);
  if (!appError) return new ScimProblem(500, 'Internal server error', undefined, undefined, { cause: err });
  const headers = { ...appError.headers, ...(appError.code === 'service_unavailable' ? { 'Retry-After': RETRY_AFTER_UNAVAILABLE } : {}) };
  let scimType: ScimType | undefined = appError instanceof ScimError ? appError.scimType : undefined;
  if (!scimType && appError.status === 400)
    scimType = /JSON|body/i.test(appError.message) && !appError.details ? 'invalidSyntax' : 'invalidValue';
  if (!scimType && appError.code === 'conflict' && appError.status === 409) scimType = 'uniqueness';
  const first = appError.details?.[0];
  const detail = first ? `${appError.message}: ${first.path} ${first.message}` : appError.message;
  return new ScimProblem(appError.status, detail, scimType, headers, { cause: err });
}

/**
 * The error boundary of the SCIM scope (/scim/v2, src/app.ts): every error of a route mounted there, raised by the
 * route or by a step before it (the body parser, the bearer check), is answered in the SCIM error schema.
 */
export const scimDialect: ErrorRequestHandler = (err, _req, _res, next) => {
  next(toScimProblem(err));
};

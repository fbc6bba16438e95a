import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { z } from 'zod';
import { AppError, type ErrorDetail } from '../errors';

interface Schemas {
  body?: z.ZodType;
  query?: z.ZodType;
  params?: z.ZodType;
}

export function zodDetails(error: z.ZodError): ErrorDetail[] {
  return error.issues.map((issue) => ({ path: issue.path.join('.') || '(root)', message: issue.message }));
}

/** Parses `schema` or throws a 400 validation_error listing every problem. */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, what = 'Request'): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new AppError('validation_error', `${what} is invalid`, { details: zodDetails(result.error) });
  }
  return result.data;
}

/**
 * Validates and replaces body, query and params with their parsed values, so handlers only ever see input
 * that matched the schema (unknown keys stripped).
 */
export function validate(schemas: Schemas): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    if (schemas.params) req.params = parseOrThrow(schemas.params, req.params, 'Path') as Request['params'];
    if (schemas.query) {
      // Express 5 exposes req.query through a getter; shadow it with the parsed value.
      Object.defineProperty(req, 'query', { value: parseOrThrow(schemas.query, req.query, 'Query'), writable: true });
    }
    if (schemas.body) req.body = parseOrThrow(schemas.body, req.body ?? {}, 'Body');
    next();
  };
}

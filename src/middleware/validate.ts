import type { z } from 'zod';
import type { ErrorDetail } from '../errors';

/**
 * The `details` of a 400 validation_error: one entry per problem, with its path. Input is validated by each route's
 * declaration (src/routes/route.ts), which answers with these.
 */
export function zodDetails(error: z.ZodError): ErrorDetail[] {
  return error.issues.map((issue) => ({ path: issue.path.join('.') || '(root)', message: issue.message }));
}

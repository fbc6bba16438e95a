import type { z } from 'zod';
import type { ErrorDetail } from '../errors';
import { saidOfIssue } from '../i18n';

/**
 * The `details` of a 400 validation_error: one entry per problem, with its path. Input is validated by each route's
 * declaration (src/routes/route.ts), which answers with these. Each carries the catalogue key of what was checked
 * (`said`, never sent), so that a page or console form shows it in its own language (CONTRACT §18).
 */
export function zodDetails(error: z.ZodError): ErrorDetail[] {
  return error.issues.map((issue) => {
    const said = saidOfIssue(issue);
    return { path: issue.path.join('.') || '(root)', message: issue.message, ...(said ? { said } : {}) };
  });
}

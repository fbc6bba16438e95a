import { zodDetails } from '../../middleware/validate';
import type { z } from 'zod';

/** What the check reads of a route declaration (src/routes/route.ts). */
interface CheckedDecl {
  method: string;
  path: string;
  response?: { schema?: z.ZodType };
}

/**
 * The declared response schema is what the OpenAPI document promises: in test runs (never in production) every JSON
 * body a route sends is checked against it, as a client would read it, so the document cannot drift from the
 * answers. Undefined when the route declares no schema.
 */
export function responseChecker(decl: CheckedDecl): ((body: unknown) => void) | undefined {
  const schema = decl.response?.schema;
  if (!schema) return undefined;
  return (body) => {
    const parsed = schema.safeParse(JSON.parse(JSON.stringify(body)));
    if (!parsed.success) {
      const problems = zodDetails(parsed.error)
        .map((d) => `${d.path}: ${d.message}`)
        .join('; ');
      throw new Error(`${decl.method.toUpperCase()} ${decl.path} answered outside its declared response schema: ${problems}`);
    }
  };
}

import { z } from 'zod';
import { rowsOfCsv } from '../../declarations/user-import';
import { pageEnv, text, type FieldErrors } from '../action';

/** The import form: the pasted JSON or CSV as the API's body, the "dry run" checkbox as `?dry_run=`. */
const x = () => pageEnv().t.console.userImport;
export const importForm = z.object({ format: text(10), content: text(16 * 1024 * 1024), dry_run: text(10) });

/** The pasted content as the API's body: a JSON array as parsed (null when it is not JSON: refused by the schema), or CSV text. */
export function bodyOf(f: { format: string; content: string }): unknown {
  if (f.format === 'csv') return f.content;
  try {
    return JSON.parse(f.content);
  } catch {
    return null;
  }
}

/** The content's own problem, said beside the field (not JSON, not an array), else the API's. */
export function contentErrors(f: { format: string; content: string }, errors: FieldErrors): FieldErrors {
  if (f.content.trim() === '') return { content: x().contentEmpty };
  if (f.format !== 'csv') {
    const body = bodyOf(f);
    if (body === null) return { content: x().notJson };
    if (!Array.isArray(body)) return { content: x().notArray };
  }
  if (errors.content) return { content: errors.content };
  const first = Object.values(errors)[0];
  return { content: first ?? x().refused };
}

export const rowCount = (f: { format: string; content: string }): number => {
  const body = bodyOf(f);
  if (Array.isArray(body)) return body.length;
  try {
    return typeof body === 'string' ? rowsOfCsv(body).length : 0;
  } catch {
    return 0;
  }
};

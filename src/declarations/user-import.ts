import { parse as parseCsv } from 'csv-parse/sync';
import { AppError } from '../errors';

/**
 * The user import's CSV reading (POST /api/admin/users/import, docs/passwords.md): pure, shared by the API, which
 * imports the rows, and the console's import form, which counts them.
 */

/** A CSV body (header row, `roles` separated by `;`) as rows; a malformed file is one refusal. */
export function rowsOfCsv(text: string): unknown[] {
  try {
    return parseCsv(text, { columns: true, skip_empty_lines: true, trim: true, bom: true, max_record_size: 65536 }) as unknown[];
  } catch (err) {
    throw new AppError('validation_error', `The CSV could not be read: ${(err as Error).message}`, {
      details: [{ path: 'body', message: (err as Error).message }],
    });
  }
}

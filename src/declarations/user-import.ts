import { AppError } from '../errors';

/**
 * The user import's CSV reading (POST /api/admin/users/import, docs/passwords.md): pure, shared by the API, which
 * imports the rows, and the console's import form, which counts them.
 */

/**
 * A CSV body (header row, `roles` separated by `;`) as rows; a malformed file is one refusal. The parser is loaded on
 * the first import (outside the server's bundle, scripts/bundle.js), not at start: most processes never import users.
 */
export function rowsOfCsv(text: string): unknown[] {
  const { parse: parseCsv } = require('csv-parse/sync') as typeof import('csv-parse/sync');
  try {
    const records: unknown[] = parseCsv(text, { columns: true, skip_empty_lines: true, trim: true, bom: true, max_record_size: 65536 });
    return records;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new AppError('validation_error', `The CSV could not be read: ${message}`, { details: [{ path: 'body', message }] });
  }
}

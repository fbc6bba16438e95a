import { z } from 'zod';
import { redirect } from '../../http/outcome';
import { text } from '../../routes/pages/page-kit';
import { userImportApi as api } from '../../routes/admin/user-import.router';
import { declareRouter, Reply } from '../../routes/route';
import type { RouteDeps } from '../../routes/types';
import { rowsOfCsv } from '../../services/user-import.service';
import type { FieldErrors } from '../../views/console/components';
import { pageEnv } from '../../views/env';
import { consoleAction, consoleForm, consolePage, consoleSection } from '../action';
import * as views from './user-import.view';

/**
 * The console's import of accounts (docs/passwords.md, "Moving users in"), built from POST /api/admin/users/import:
 * the same guard (users:write; rows with roles need users:manage_roles), schema, service call and audit. The console
 * adds only the form: the pasted JSON or CSV as the body, the "dry run" checkbox as `?dry_run=`. The export is the
 * API's own GET /api/admin/users/export (users:read), linked from the page.
 */
const importForm = z.object({ format: text(10), content: text(16 * 1024 * 1024), dry_run: text(10) });
const x = () => pageEnv().t.console.userImport;

/** The pasted content as the API's body: a JSON array as parsed (null when it is not JSON: refused by the schema), or CSV text. */
function bodyOf(f: { format: string; content: string }): unknown {
  if (f.format === 'csv') return f.content;
  try {
    return JSON.parse(f.content) as unknown;
  } catch {
    return null;
  }
}

/** The content's own problem, said beside the field (not JSON, not an array), else the API's. */
function contentErrors(f: { format: string; content: string }, errors: FieldErrors): FieldErrors {
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

const rowCount = (f: { format: string; content: string }): number => {
  const body = bodyOf(f);
  if (Array.isArray(body)) return body.length;
  try {
    return typeof body === 'string' ? rowsOfCsv(body).length : 0;
  } catch {
    return 0;
  }
};

export function createConsoleUserImportRouter(deps: RouteDeps) {
  const { ctx } = deps;
  const routes = consoleSection('users', ctx, [
    consoleForm(api.import, {
      path: '/users/import',
      page: () =>
        consolePage(
          views.renderImportForm,
          { values: { format: 'json', content: '', dry_run: 'true' }, errors: {}, report: [] },
          x().title,
        ),
    }),
    consoleAction(api.import, {
      path: '/users/import',
      form: importForm,
      input: (f) => bodyOf(f),
      query: (f) => ({ dry_run: f.dry_run === 'true' ? 'true' : 'false' }),
      field: 'content',
      invalid: ({ values, errors, details }) => {
        const shown = contentErrors(values, errors);
        return consolePage(views.renderImportForm, { values, errors: shown, report: details }, x().title, 400, shown);
      },
      done: (answer, { form }) => {
        const r = answer instanceof Reply ? answer.body : answer;
        return r.dry_run
          ? consolePage(
              views.renderImportForm,
              { values: { ...form, dry_run: '' }, errors: {}, report: [], checked: rowCount(form) },
              x().dryRunTitle,
            )
          : redirect('/admin/users', x().imported(r.imported));
      },
    }),
  ]);
  return declareRouter(deps, routes, { tags: ['Console'] });
}

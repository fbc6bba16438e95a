import { userImportApi as api } from '../../routes/admin/user-import.router';
import { Reply } from '../../routes/route';
import { consoleAction, consoleForm, consolePage, consoleRouter, pageEnv, redirect } from '../action';
import { bodyOf, contentErrors, importForm, rowCount } from './user-import.form';
import * as views from './user-import.view';

/**
 * The console's import of accounts (docs/passwords.md, "Moving users in"), built from POST /api/admin/users/import:
 * the same guard (users:write; rows with roles need users:manage_roles), schema, service call and audit. The console
 * adds only the form: the pasted JSON or CSV as the body, the "dry run" checkbox as `?dry_run=`. The export is the
 * API's own GET /api/admin/users/export (users:read), linked from the page.
 */
const x = () => pageEnv().t.console.userImport;

export const createConsoleUserImportRouter = consoleRouter('users', () => [
  consoleForm(api.import, {
    path: '/users/import',
    page: () =>
      consolePage(views.renderImportForm, { values: { format: 'json', content: '', dry_run: 'true' }, errors: {}, report: [] }, x().title),
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

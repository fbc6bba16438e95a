import { z } from 'zod';
import type { SettingEntry } from '../../declarations/settings';
import { settingsApi as api } from '../../routes/settings/settings.router';
import { effectiveSettings, NOT_SET, SECRET_SET } from '../../services/settings.service';
import { consoleAction, consolePage, consoleRouter, pageEnv, Redirect, redirect, text, type Caller, type FieldErrors } from '../action';
import { changesOf, settingsForm } from './settings.form';
import { renderSettingsPage } from './settings.view';

/**
 * The console's Settings page (docs/settings.md), built from GET|PATCH /api/admin/settings and POST
 * /api/admin/settings/test-mail: the same guards (system:manage_users; the sensitive settings and the test mail
 * system:manage_settings), the same validation (its messages beside the fields) and the same audit event.
 */
const x = () => pageEnv().t.console.settings;
type Refused = { values?: Record<string, string>; errors?: FieldErrors; status?: number };

export const createConsoleSettingsRouter = consoleRouter('settings', (deps) => {
  const environment = () =>
    effectiveSettings(deps.ctx.config).map(([key, value]): [string, string] => [
      key,
      value === NOT_SET ? x().notSet : value === SECRET_SET ? `•••••• (${x().envSecretSet})` : value,
    ]);
  // The sensitive settings need system:manage_settings, the test mail's guard.
  const page = ({ allows }: Caller, settings: SettingEntry[], refused: Refused = {}) =>
    consolePage(
      renderSettingsPage,
      {
        settings,
        values: refused.values,
        errors: refused.errors ?? {},
        mayChangeSensitive: allows(api.testMail),
        environment: environment(),
      },
      x().title,
      refused.status,
    );
  const again = async (refused: Refused, a: Caller) => page(a, (await a.call(api.list, {})).settings, refused);
  return [
    consoleAction(api.list, { path: '/settings', done: (r, a) => page(a, r.settings) }),
    consoleAction(api.change, {
      path: '/settings',
      form: settingsForm,
      input: (form) => changesOf(form),
      before: async ({ form }) =>
        Object.keys(changesOf(form)).length ? undefined : new Redirect('/admin/settings', { kind: 'error', message: x().nothingChanged }),
      back: () => '/admin/settings',
      invalid: again,
      done: () => redirect('/admin/settings', x().saved),
    }),
    consoleAction(api.testMail, {
      path: '/settings/test-mail',
      form: z.object({ to: text(320) }),
      input: (form) => ({ to: form.to.trim() }),
      invalid: again,
      done: (_r, { form }) => redirect('/admin/settings', x().testMailQueued(form.to.trim())),
    }),
  ];
});

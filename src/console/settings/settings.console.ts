import { z } from 'zod';
import { settingsApi as api } from '../../routes/settings/settings.router';
import type { SettingEntry } from '../../declarations/settings';
import type { StartupSetting } from '../../wire/settings/settings.schemas';
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
/** What GET /api/admin/settings answers. */
type SettingsList = { settings: SettingEntry[]; environment: StartupSetting[] };

export const createConsoleSettingsRouter = consoleRouter('settings', () => {
  // The page of the settings a caller reads, its words read at once (before any await: lib/request-context.ts). The
  // sensitive settings need system:manage_settings, the test mail's guard.
  const pageOf = ({ allows }: Caller, refused: Refused = {}) => {
    const says = x();
    const shown = (s: StartupSetting): [string, string] => [
      s.variable ?? s.name,
      s.value ?? (s.set ? `•••••• (${says.envSecretSet})` : says.notSet),
    ];
    return ({ settings, environment }: SettingsList) =>
      consolePage(
        renderSettingsPage,
        {
          settings,
          values: refused.values,
          errors: refused.errors ?? {},
          mayChangeSensitive: allows(api.testMail),
          environment: environment.map(shown),
        },
        says.title,
        refused.status,
      );
  };
  const again = async (refused: Refused, a: Caller) => {
    const page = pageOf(a, refused);
    return page(await a.call(api.list, {}));
  };
  return [
    consoleAction(api.list, { path: '/settings', done: (r, a) => pageOf(a)(r) }),
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

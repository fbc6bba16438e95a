import { z } from 'zod';
import { Redirect, redirect } from '../../http/outcome';
import { text } from '../../routes/pages/page-kit';
import { declareRouter } from '../../routes/route';
import { settingsApi as api } from '../../routes/settings/settings.router';
import type { RouteDeps } from '../../routes/types';
import { hasPermission, type Principal } from '../../services/principal';
import { effectiveSettings, NOT_SET, SECRET_SET } from '../../services/settings.service';
import { MANAGE_SETTINGS } from '../../declarations/settings';
import type { SettingEntry } from '../../declarations/settings';
import type { FieldErrors } from '../../views/console/components';
import { pageEnv } from '../../views/env';
import { consoleAction, consolePage, consoleSection, type ActionInput } from '../action';
import { changesOf, settingsForm } from './settings.form';
import { renderSettingsPage } from './settings.view';

/**
 * The console's Settings page (docs/settings.md), built from GET|PATCH /api/admin/settings and POST
 * /api/admin/settings/test-mail: the same guards (system:manage_users; the sensitive settings and the test mail
 * system:manage_settings), the same validation (its messages beside the fields) and the same audit event.
 */
const x = () => pageEnv().t.console.settings;
const testMailForm = z.object({ to: text(320) });

export function createConsoleSettingsRouter(deps: RouteDeps) {
  const { config } = deps.ctx;
  const page = (
    principal: Principal,
    settings: SettingEntry[],
    refused: { values?: Record<string, string>; errors?: FieldErrors; status?: number } = {},
  ) =>
    consolePage(
      renderSettingsPage,
      {
        settings,
        values: refused.values,
        errors: refused.errors ?? {},
        mayChangeSensitive: hasPermission(principal, MANAGE_SETTINGS),
        environment: effectiveSettings(config).map(([key, value]): [string, string] => [
          key,
          value === NOT_SET ? x().notSet : value === SECRET_SET ? `•••••• (${x().envSecretSet})` : value,
        ]),
      },
      x().title,
      refused.status,
    );
  const again = async (
    refused: { values: Record<string, string>; errors: FieldErrors; status: number },
    { principal, call }: Pick<ActionInput<never, never>, 'principal' | 'call'>,
  ) => page(principal, (await call(api.list, {})).settings, refused);

  const routes = consoleSection('settings', deps.ctx, [
    consoleAction(api.list, { path: '/settings', done: (r, { principal }) => page(principal, r.settings) }),
    consoleAction(api.change, {
      path: '/settings',
      form: settingsForm,
      input: (form) => changesOf(form as Record<string, string>),
      before: async ({ form }) =>
        Object.keys(changesOf(form as Record<string, string>)).length
          ? undefined
          : new Redirect('/admin/settings', { kind: 'error', message: x().nothingChanged }),
      back: () => '/admin/settings',
      invalid: (refused, a) => again(refused as { values: Record<string, string>; errors: FieldErrors; status: number }, a),
      done: () => redirect('/admin/settings', x().saved),
    }),
    consoleAction(api.testMail, {
      path: '/settings/test-mail',
      form: testMailForm,
      input: (form) => ({ to: form.to.trim() }),
      invalid: (refused, a) => again(refused, a),
      done: (_r, { form }) => redirect('/admin/settings', x().testMailQueued(form.to.trim())),
    }),
  ]);
  return declareRouter(deps, routes, { tags: ['Console'] });
}

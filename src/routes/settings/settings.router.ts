import type { z } from 'zod';
import { badRequest } from '../../errors';
import { ENVIRONMENT_VARIABLES } from '../../config';
import { MANAGE_SETTINGS } from '../../declarations/settings';
import { changeSettings, listSettings, sendTestMail } from '../../services/settings/settings.service';
import { endpoint, servingRouter } from '../route';
import { effectiveSettings, NOT_SET, SECRET_SET } from '../../services/settings.service';
import {
  changeSettingsBody,
  settingsBody,
  settingsListBody,
  testMailBody,
  type StartupSetting,
} from '../../wire/settings/settings.schemas';

const PERMISSION = 'system:manage_users';

/** A start-up value as shown: never a secret's value. */
const presentStartupSetting = ([name, shown]: [string, string]): StartupSetting => {
  const snake = name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
  const variable = ENVIRONMENT_VARIABLES.has(snake) ? snake : null;
  return shown === NOT_SET
    ? { name, variable, value: null, set: false }
    : shown === SECRET_SET
      ? { name, variable, value: null, set: true }
      : { name, variable, value: shown, set: true };
};

/** A refused change names each setting (and its variable when the environment pins it): CONTRACT §18. */
const invalidChange = (issues: z.core.$ZodIssue[]) => {
  const details = issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => ({ path: key, message: `${key} is not a setting` }));
    const name = String(issue.path[0] ?? '(root)');
    const inner = issue.path.slice(1).filter((p) => typeof p === 'string');
    const where = inner.length ? `${inner.join('.')}: ` : '';
    return [{ path: issue.path.join('.') || '(root)', message: `${name}: ${where}${issue.message}` }];
  });
  return badRequest(details.map((d) => d.message).join('; '), details);
};

/**
 * CONTRACT §18 (docs/settings.md): the runtime settings. GET shows each with its source; PATCH stores some and every
 * instance applies them within 2 s; test-mail sends a mail through the SMTP settings in force. Endpoints as values:
 * the console's Settings form is built from them (src/console/settings/settings.console.ts).
 */
export const settingsApi = {
  list: endpoint(
    {
      method: 'get',
      path: '/settings',
      summary: `Runtime settings: value (null for a secret, with set), source, read_only and the variable that pins each`,
      description:
        '`environment` lists, read-only, the configuration the server started with (environment variables and defaults) by ' +
        'name and by the environment variable that sets it (variable, null for a derived value): value null when not set, and for a secret that is set (set: true, never the value); credentials inside ' +
        'connection URLs masked.',
      auth: 'user',
      permission: PERMISSION,
      noStore: true,
      response: { description: '{ settings, environment }', schema: settingsListBody },
    },
    async (_input, ctx) => ({ settings: await listSettings(ctx), environment: effectiveSettings(ctx.config).map(presentStartupSetting) }),
  ),
  change: endpoint(
    {
      method: 'patch',
      path: '/settings',
      summary:
        'Change runtime settings (those an environment variable pins are read-only); a sensitive one also needs system:manage_settings (403 forbidden naming it); live on every instance within 2 s',
      auth: 'user',
      permission: PERMISSION,
      noStore: true,
      body: changeSettingsBody,
      invalid: invalidChange,
      response: { description: '{ settings }', schema: settingsBody },
    },
    async ({ body, principal }, ctx) => ({ settings: await changeSettings(ctx, principal, body) }),
  ),
  testMail: endpoint(
    {
      method: 'post',
      path: '/settings/test-mail',
      summary: 'Send a test mail through the SMTP settings in force (queued: 202)',
      auth: 'user',
      permission: MANAGE_SETTINGS,
      body: testMailBody,
      response: { status: 202, description: 'Queued; a failed delivery is audited as mail.send_failed' },
    },
    async ({ body }, ctx) => {
      sendTestMail(ctx, body.to);
    },
  ),
};

export const createSettingsRouter = servingRouter(settingsApi, { tags: ['Settings'] });

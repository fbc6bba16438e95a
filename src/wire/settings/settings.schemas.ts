import { z } from 'zod';
import { settingEntrySchema, settingsPatchSchema } from '../../declarations/settings';

/** CONTRACT §18: `{ settings: [...] }`, one entry per declared setting. */
export const settingsBody = z.object({ settings: z.array(settingEntrySchema) });

/**
 * One value of the configuration the server started with (environment variables and their defaults), by its name in
 * the configuration: `value` is null when not set, and for a secret that is set (`set: true`, never the value);
 * credentials inside connection URLs are masked.
 */
export const startupSettingBody = z.strictObject({
  name: z.string(),
  /** The environment variable that sets it (null for a value the server derives, e.g. baseOrigin from BASE_URL). */
  variable: z.string().nullable(),
  value: z.string().nullable(),
  set: z.boolean(),
});

/** GET: the runtime settings and, read-only, the start-up configuration (the console's Settings page shows both). */
export const settingsListBody = settingsBody.extend({ environment: z.array(startupSettingBody) });
export type StartupSetting = z.output<typeof startupSettingBody>;

export const changeSettingsBody = settingsPatchSchema;

export const testMailBody = z.strictObject({ to: z.email('to must be an email address').max(320) });

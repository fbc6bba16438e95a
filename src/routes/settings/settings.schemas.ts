import { z } from 'zod';
import { settingEntrySchema, settingsPatchSchema } from '../../declarations/settings';

/** CONTRACT §18: `{ settings: [...] }`, one entry per declared setting. */
export const settingsBody = z.object({ settings: z.array(settingEntrySchema) });

export const changeSettingsBody = settingsPatchSchema;

export const testMailBody = z.strictObject({ to: z.email('to must be an email address').max(320) });

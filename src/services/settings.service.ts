import type { Config } from '../config';
import { MASK, maskCredentialsDeep, maskUrlCredentials } from '../lib/mask-credentials';

/** Config keys whose value is a secret: shown as set or unset, never the value (CONTRACT §14 Settings). */
const SECRET_KEY = /secret|password|token$/i;

/**
 * Connection URLs may carry credentials (userinfo, password parameters): lib/mask-credentials.ts masks them all. A
 * `…Url` value that is no URL at all (a libpq `host=… password=…` string) is masked whole.
 */
const maskUrlPassword = (value: string): string => (/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? maskUrlCredentials(value) : MASK);

/**
 * The effective configuration as `[name, shown value]` pairs, sorted by name: secrets masked, credentials removed from
 * connection URLs and from any other value holding a URL. Works on whatever keys Config has, so a key added later is
 * listed (and masked when its name says it is a secret) without touching this function.
 */
/** What effectiveSettings shows for an empty value and for a secret that is set (the console says them in its language). */
export const NOT_SET = '(not set)';
export const SECRET_SET = '•••••• (set)';

export function effectiveSettings(config: Readonly<Config>): Array<[string, string]> {
  return (
    Object.entries(config)
      // The runtime settings (CONTRACT §18) are on the Settings form, from GET /api/admin/settings (secrets write-only).
      .filter(([key, value]) => typeof value !== 'function' && key !== 'pinnedSettings')
      .map(([key, value]): [string, string] => {
        if (value === undefined || value === null || value === '') return [key, NOT_SET];
        if (SECRET_KEY.test(key)) return [key, SECRET_SET];
        if (typeof value === 'string' && /Url$/.test(key)) return [key, maskUrlPassword(value)];
        return [key, typeof value === 'string' ? maskUrlCredentials(value) : JSON.stringify(maskCredentialsDeep(value))];
      })
      .sort(([a], [b]) => a.localeCompare(b))
  );
}

import type { Config } from '../config';

/** Config keys whose value is a secret: shown as set or unset, never the value (CONTRACT §14 Settings). */
const SECRET_KEY = /secret|password|token$/i;

/** Connection URLs may carry a password in their userinfo part. */
function maskUrlPassword(value: string): string {
  try {
    const url = new URL(value);
    if (!url.password) return value;
    url.password = 'MASKED';
    return url.toString().replace('MASKED', '••••••');
  } catch {
    return '••••••';
  }
}

/**
 * The effective configuration as `[name, shown value]` pairs, sorted by name: secrets masked, passwords removed from
 * connection URLs. Works on whatever keys Config has, so a key added later is listed (and masked when its name says
 * it is a secret) without touching this function.
 */
export function effectiveSettings(config: Readonly<Config>): Array<[string, string]> {
  return (
    Object.entries(config)
      // The runtime settings (CONTRACT §18) are on the Settings form, from GET /api/admin/settings (secrets write-only).
      .filter(([key, value]) => typeof value !== 'function' && key !== 'pinnedSettings')
      .map(([key, value]): [string, string] => {
        if (value === undefined || value === null || value === '') return [key, '(not set)'];
        if (SECRET_KEY.test(key)) return [key, '•••••• (set)'];
        if (typeof value === 'string' && /Url$/.test(key)) return [key, maskUrlPassword(value)];
        return [key, typeof value === 'string' ? value : JSON.stringify(value)];
      })
      .sort(([a], [b]) => a.localeCompare(b))
  );
}

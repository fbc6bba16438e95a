import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CATALOGUES } from '../../src/i18n';
import { defaultSettings, envVarOf, pinnedSettings, SETTINGS } from '../../src/declarations/settings';
import { settingsTable } from '../helpers/settings-table';

/** CONTRACT §18: one declaration per setting drives the docs table, the catalogues and the environment's pinning. */
test('docs/settings.md holds exactly the table the declarations make', () => {
  const doc = readFileSync(path.join(__dirname, '../../docs/settings.md'), 'utf8');
  const table = /<!-- settings-table:start -->\n([\s\S]*?)\n<!-- settings-table:end -->/.exec(doc)?.[1];
  expect(table).toBe(settingsTable());
});

test.each(Object.entries(CATALOGUES))('the %s catalogue labels and describes every setting', (_locale, messages) => {
  for (const { name } of SETTINGS) {
    expect(messages.settingsCatalogue[name].label.length).toBeGreaterThan(2);
    expect(messages.settingsCatalogue[name].description.length).toBeGreaterThan(10);
  }
});

test('every default passes its own validation, and the variable is the name in upper case', () => {
  for (const declaration of SETTINGS) {
    expect(declaration.schema.safeParse(declaration.default)).toMatchObject({ success: true });
    expect(envVarOf(declaration.name)).toBe(declaration.name.toUpperCase());
  }
  expect(Object.keys(defaultSettings())).toEqual(SETTINGS.map((d) => d.name));
});

test('the environment pins with each format: text, boolean, integer, list, JSON; empty pins nothing', () => {
  expect(
    pinnedSettings({
      REGISTRATION: 'closed',
      MFA_REQUIRED_FOR_ADMINS: 'yes',
      INVITATION_TTL_HOURS: '24',
      ALLOWED_ORIGINS: 'https://a.test, http://localhost:5173/x',
      PASSWORD_POLICY: '{"min_length":12}',
      BRAND_NAME: '   ',
    }),
  ).toEqual({
    registration: 'closed',
    mfa_required_for_admins: true,
    invitation_ttl_hours: 24,
    allowed_origins: ['https://a.test', 'http://localhost:5173'],
    password_policy: { min_length: 12, breached_check: false, reject_email_local_part: false },
  });
});

test.each([
  [{ EMAIL_SIGN_IN: 'sometimes' }, /^EMAIL_SIGN_IN: must be true or false$/],
  [{ INVITATION_TTL_HOURS: '3 days' }, /^INVITATION_TTL_HOURS: must be a whole number$/],
  [{ PASSWORD_POLICY: '{min_length: 8}' }, /^PASSWORD_POLICY: must be JSON$/],
  [{ PASSWORD_POLICY: '{"min_length":100}' }, /^PASSWORD_POLICY: min_length: min_length must be at most 72$/],
  [{ DEFAULT_LOCALE: 'fr' }, /^DEFAULT_LOCALE: must be one of en, de$/],
  [{ SMTP_URL: 'mail.example.com' }, /^SMTP_URL: must be an smtp:\/\/ or smtps:\/\/ URL$/],
])('%j is refused naming the variable', (env, message) => {
  expect(() => pinnedSettings(env)).toThrow(message);
});

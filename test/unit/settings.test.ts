import { loadConfig } from '../../src/config';
import { effectiveSettings } from '../../src/services/settings.service';

const config = loadConfig({
  NODE_ENV: 'test',
  JWT_ACCESS_SECRET: 'access-secret-0123456789abcdefghijklmnopqrstuvwxyz',
  JWT_REFRESH_SECRET: 'refresh-secret-0123456789abcdefghijklmnopqrstuvwxyz',
  DATABASE_URL: 'postgres://sso:db-password-123@db.internal:5432/sso',
  SMTP_URL: 'smtp://mailer:smtp-password-456@smtp.internal:587',
  METRICS_TOKEN: 'metrics-token-789-abcdefghijklmnop',
  BOOTSTRAP_ADMIN_EMAIL: 'root@example.test',
  BOOTSTRAP_ADMIN_PASSWORD: 'bootstrap-password',
  BASE_URL: 'https://sso.example.test',
});
const shown = new Map(effectiveSettings(config));
const all = [...shown.values()].join('\n');

test.each([
  ['jwtAccessSecret', 'access-secret-0123456789'],
  ['jwtRefreshSecret', 'refresh-secret-0123456789'],
  ['keysSecret', config.keysSecret],
  ['metricsToken', 'metrics-token-789'],
  ['bootstrapAdminPassword', 'bootstrap-password'],
])('the secret %s is masked, its value nowhere', (key, value) => {
  expect(shown.get(key)).toBe('•••••• (set)');
  expect(all).not.toContain(value);
});

test('connection URLs keep their host but lose their password', () => {
  expect(shown.get('databaseUrl')).toBe('postgres://sso:••••••@db.internal:5432/sso');
  // SMTP_URL pins the runtime setting smtp_url (CONTRACT §18), which this list leaves to the settings form.
  expect(shown.has('pinnedSettings')).toBe(false);
  expect(all).not.toContain('db-password-123');
  expect(all).not.toContain('smtp-password-456');
});

test('ordinary settings are shown as they are, lifetimes included; unset ones say so', () => {
  expect(shown.get('baseUrl')).toBe('https://sso.example.test');
  expect(shown.get('accessTokenTtlSeconds')).toMatch(/^\d+$/);
  expect(shown.get('bootstrapAdminEmail')).toBe('root@example.test');
  expect(shown.get('redisUrl')).toBe('(not set)');
});

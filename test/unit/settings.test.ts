import { loadConfig } from '../../src/config';
import { effectiveSettings } from '../../src/services/settings.service';

const env = {
  NODE_ENV: 'test',
  JWT_ACCESS_SECRET: 'access-secret-0123456789abcdefghijklmnopqrstuvwxyz',
  JWT_REFRESH_SECRET: 'refresh-secret-0123456789abcdefghijklmnopqrstuvwxyz',
  DATABASE_URL: 'postgres://sso:db-password-123@db.internal:5432/sso?sslpassword=ssl-password-000',
  SMTP_URL: 'smtp://mailer-user:smtp-password-456@smtp.internal:587',
  REDIS_URL: 'redis://default:redis-password-789@cache.internal:6379',
  METRICS_TOKEN: 'metrics-token-789-abcdefghijklmnop',
  BOOTSTRAP_ADMIN_EMAIL: 'root@example.test',
  BOOTSTRAP_ADMIN_PASSWORD: 'bootstrap-password',
  BASE_URL: 'https://sso.example.test',
};
const config = loadConfig(env);
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

test('connection URLs keep their host but lose every credential: user names, passwords, password parameters', () => {
  expect(shown.get('databaseUrl')).toBe('postgres://••••••:••••••@db.internal:5432/sso?sslpassword=••••••');
  // SMTP_URL pins the runtime setting smtp_url (CONTRACT §18), which this list leaves to the settings form.
  expect(shown.has('pinnedSettings')).toBe(false);
  expect(shown.get('redisUrl')).toBe('redis://••••••:••••••@cache.internal:6379');
  for (const credential of ['db-password-123', 'ssl-password-000', 'smtp-password-456', 'mailer-user', 'redis-password-789']) {
    expect(all).not.toContain(credential);
  }
});

test('a database password passed as a URL parameter is masked', () => {
  const withParam = loadConfig({ ...env, DATABASE_URL: 'postgres://db.internal/sso?user=sso&password=db-password-123' });
  expect(new Map(effectiveSettings(withParam)).get('databaseUrl')).toBe('postgres://db.internal/sso?user=••••••&password=••••••');
});

test('ordinary settings are shown as they are, lifetimes included; unset ones say so', () => {
  expect(shown.get('baseUrl')).toBe('https://sso.example.test');
  expect(shown.get('accessTokenTtlSeconds')).toMatch(/^\d+$/);
  expect(shown.get('bootstrapAdminEmail')).toBe('root@example.test');
  expect(shown.get('logLevel')).toMatch(/^\w+$/);
});

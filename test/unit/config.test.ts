import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config';

const secrets = {
  JWT_ACCESS_SECRET: 'a'.repeat(32),
  JWT_REFRESH_SECRET: 'b'.repeat(32),
};

function tmpDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'sso-config-'));
}

describe('loadConfig', () => {
  test('defaults follow CONTRACT §1', () => {
    const config = loadConfig({ DATA_DIR: tmpDir() });
    expect(config).toMatchObject({
      port: 3000,
      baseUrl: 'http://localhost:3000',
      issuer: 'service-sso',
      audience: 'service',
      rateLimitWindowMs: 900000,
      rateLimitMax: 300,
      bcryptRounds: 10,
      cookieSecure: false,
      logLevel: 'info',
      loginApps: {},
      pinnedSettings: {},
    });
    expect(config.databaseUrl).toBeUndefined();
    expect(Object.isFrozen(config)).toBe(true);
  });

  test('development secrets are generated once into DATA_DIR and reused', () => {
    const dir = tmpDir();
    const a = loadConfig({ DATA_DIR: dir });
    const b = loadConfig({ DATA_DIR: dir });
    expect(a.jwtAccessSecret).toHaveLength(64);
    expect(a.jwtAccessSecret).not.toBe(a.jwtRefreshSecret);
    expect(b.jwtAccessSecret).toBe(a.jwtAccessSecret);
    expect(fs.statSync(path.join(dir, 'dev-secrets.json')).mode & 0o077).toBe(0);
  });

  test('BASE_URL defaults to the port and loses its trailing slash', () => {
    expect(loadConfig({ ...secrets, PORT: '8080' }).baseUrl).toBe('http://localhost:8080');
    expect(loadConfig({ ...secrets, BASE_URL: 'https://sso.example.com/' }).baseUrl).toBe('https://sso.example.com');
  });

  test('production: cookies are Secure by default', () => {
    const config = loadConfig({ ...secrets, NODE_ENV: 'production', SMTP_URL: 'smtp://mail:25' });
    expect(config.cookieSecure).toBe(true);
  });

  test('CIMD: off by default; allowed hosts lower-cased, IPv6 literals without brackets', () => {
    expect(loadConfig({ ...secrets }).pinnedSettings.client_id_metadata_documents).toBeUndefined();
    const config = loadConfig({
      ...secrets,
      CLIENT_ID_METADATA_DOCUMENTS: 'true',
      CIMD_ALLOWED_HOSTS: ' Docs.Internal , [fd00::1],10.0.0.8',
    });
    expect(config.pinnedSettings.client_id_metadata_documents).toBe(true);
    expect(config.cimdAllowedHosts).toEqual(['docs.internal', 'fd00::1', '10.0.0.8']);
  });

  test.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ BASE_URL: 'not a url' }, 'BASE_URL'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ JWT_ACCESS_SECRET: 'short' }, 'JWT_ACCESS_SECRET'],
    [{ JWT_ACCESS_SECRET: 'c'.repeat(40), JWT_REFRESH_SECRET: 'c'.repeat(40) }, 'JWT_REFRESH_SECRET'],
    [{ LOGIN_APPS: '{not json' }, 'LOGIN_APPS'],
    [{ LOGIN_APPS: '{"portal":"ftp://x"}' }, 'LOGIN_APPS'],
    [{ LOGIN_APPS: '{"portal":"https://p.test"}', DEFAULT_LOGIN_APP: 'other' }, 'DEFAULT_LOGIN_APP'],
    [{ ALLOWED_ORIGINS: 'https://ok.test,nope' }, 'ALLOWED_ORIGINS'],
    [{ RATE_LIMIT_MAX: '-1' }, 'RATE_LIMIT_MAX'],
    [{ DATABASE_POOL_MAX: '0' }, 'DATABASE_POOL_MAX'],
    [{ DATABASE_POOL_MAX: 'ten' }, 'DATABASE_POOL_MAX'],
    [{ REDIS_URL: 'http://redis' }, 'REDIS_URL'],
    [{ SMTP_URL: 'mail.example.com' }, 'SMTP_URL'],
    [{ BCRYPT_ROUNDS: '40' }, 'BCRYPT_ROUNDS'],
    [{ COOKIE_SECURE: 'maybe' }, 'COOKIE_SECURE'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ NODE_ENV: 'staging' }, 'NODE_ENV'],
    [{ BOOTSTRAP_ADMIN_EMAIL: 'admin@example.com' }, 'BOOTSTRAP_ADMIN_PASSWORD'],
    [{ BOOTSTRAP_ADMIN_EMAIL: 'nope', BOOTSTRAP_ADMIN_PASSWORD: 'secret1' }, 'BOOTSTRAP_ADMIN_EMAIL'],
    [{ CLIENT_ID_METADATA_DOCUMENTS: 'sometimes' }, 'CLIENT_ID_METADATA_DOCUMENTS'],
    [{ CIMD_ALLOWED_HOSTS: 'https://docs.internal' }, 'CIMD_ALLOWED_HOSTS'],
    [{ CIMD_ALLOWED_HOSTS: 'docs.internal:8443' }, 'CIMD_ALLOWED_HOSTS'],
    [{ CIMD_ALLOWED_HOSTS: 'docs.internal/path' }, 'CIMD_ALLOWED_HOSTS'],
  ])('%j stops with a message naming %s', (env, variable) => {
    expect(() => loadConfig({ ...secrets, ...env })).toThrow(ConfigError);
    expect(() => loadConfig({ ...secrets, ...env })).toThrow(new RegExp(`^${variable}: `));
  });

  test('production requires both JWT secrets (SMTP_URL or a stored smtp_url is checked at start: server.ts)', () => {
    expect(() => loadConfig({ NODE_ENV: 'production', SMTP_URL: 'smtp://m:25' })).toThrow(/^JWT_ACCESS_SECRET: /);
    expect(() => loadConfig({ NODE_ENV: 'production', JWT_ACCESS_SECRET: 'a'.repeat(32), SMTP_URL: 'smtp://m:25' })).toThrow(
      /^JWT_REFRESH_SECRET: /,
    );
  });

  test('lists are parsed to origins', () => {
    const config = loadConfig({
      ...secrets,
      ALLOWED_ORIGINS: ' https://a.test , https://b.test:8443/ignored-path ',
      LOGIN_APPS: '{"portal":"https://portal.test/app","admin":"https://admin.test"}',
    });
    expect(config.pinnedSettings.allowed_origins).toEqual(['https://a.test', 'https://b.test:8443']);
    expect(config.loginApps).toEqual({ portal: 'https://portal.test', admin: 'https://admin.test' });
    expect(config.defaultLoginApp).toBe('portal');
  });

  describe('CONTRACT §15: registration and branding', () => {
    test('unset variables pin nothing (the runtime settings then apply: test/e2e/settings.test.ts)', () => {
      const config = loadConfig({ DATA_DIR: tmpDir(), ...secrets, BRAND_NAME: '  ' });
      expect(config.pinnedSettings).toEqual({});
    });

    test('accepted values', () => {
      const config = loadConfig({
        DATA_DIR: tmpDir(),
        ...secrets,
        REGISTRATION: 'closed',
        BRAND_NAME: ' Acme ',
        BRAND_LOGO_URL: 'https://cdn.acme.test/l.svg',
        BRAND_COLOR: '#7C3AED',
      });
      expect(config.pinnedSettings).toEqual({
        registration: 'closed',
        brand_name: 'Acme',
        brand_logo_url: 'https://cdn.acme.test/l.svg',
        brand_color: '#7c3aed',
      });
      expect(loadConfig({ DATA_DIR: tmpDir(), ...secrets, BRAND_COLOR: '#26e' }).pinnedSettings.brand_color).toBe('#2266ee');
    });

    test.each([
      [{ REGISTRATION: 'maybe' }, /^REGISTRATION: /],
      [{ BRAND_LOGO_URL: 'http://cdn.acme.test/l.svg' }, /^BRAND_LOGO_URL: must be an https:\/\/ URL$/],
      [{ BRAND_COLOR: 'purple' }, /^BRAND_COLOR: must be a CSS hex colour such as #1d4ed8$/],
      [{ BRAND_COLOR: '#ffcc00' }, /^BRAND_COLOR: #ffcc00 fails WCAG AA contrast: .+ \(needs 4\.5:1\)$/],
      [{ BRAND_COLOR: '#111111' }, /^BRAND_COLOR: #111111 fails WCAG AA contrast: filled button .+ dark scheme/],
      [{ BRAND_NAME: 'x'.repeat(81) }, /^BRAND_NAME: must be at most 80 characters$/],
    ])('%p is refused with one line naming the variable', (env, message) => {
      expect(() => loadConfig({ DATA_DIR: tmpDir(), ...secrets, ...env })).toThrow(ConfigError);
      expect(() => loadConfig({ DATA_DIR: tmpDir(), ...secrets, ...env })).toThrow(message);
    });
  });
  describe('CONTRACT §13: CLIENT_REGISTRATION', () => {
    test('off by default, with a per-IP registration budget of 10 an hour', () => {
      const config = loadConfig({ DATA_DIR: tmpDir(), ...secrets });
      expect(config.pinnedSettings.client_registration).toBeUndefined();
      expect(config.clientRegistrationRateLimit).toEqual({ windowMs: 3_600_000, max: 10 });
    });

    test.each(['off', 'token', 'open'] as const)('%s is accepted', (mode) => {
      expect(loadConfig({ DATA_DIR: tmpDir(), ...secrets, CLIENT_REGISTRATION: mode }).pinnedSettings.client_registration).toBe(mode);
    });

    test.each([
      [{ CLIENT_REGISTRATION: 'on' }, /^CLIENT_REGISTRATION: must be off, token or open$/],
      [{ CLIENT_REGISTRATION: 'OPEN' }, /^CLIENT_REGISTRATION: must be off, token or open$/],
      [{ CLIENT_REGISTRATION_RATE_LIMIT_MAX: '0' }, /^CLIENT_REGISTRATION_RATE_LIMIT_MAX: /],
      [{ CLIENT_REGISTRATION_RATE_LIMIT_WINDOW_MS: 'hour' }, /^CLIENT_REGISTRATION_RATE_LIMIT_WINDOW_MS: must be a whole number$/],
    ])('%p stops the start with one line naming the variable', (env, message) => {
      expect(() => loadConfig({ DATA_DIR: tmpDir(), ...secrets, ...env })).toThrow(ConfigError);
      expect(() => loadConfig({ DATA_DIR: tmpDir(), ...secrets, ...env })).toThrow(message);
    });
  });
});

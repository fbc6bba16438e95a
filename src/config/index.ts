import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { pinnedSettings, SettingEnvError, type SettingValues } from '../declarations/settings';
import { parseJsonText } from '../lib/json-text';

const boolString = z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((v) => v === 'true' || v === '1' || v === 'yes');

const intString = (min: number, max: number) =>
  z.string().regex(/^\d+$/, 'must be a whole number').transform(Number).pipe(z.number().int().min(min).max(max));

const urlString = z.url({ protocol: /^https?$/ });

/** A DNS name or an IPv4 literal (letters, digits, hyphens, dots): what an allow-list of hosts may hold. */
const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/**
 * Every environment variable the service reads (CONTRACT §1). Parsed once at boot; code imports the
 * resulting Config and never reads process.env.
 */
const envSchema = z.object({
  // production | development | test: production requires explicit secrets and SMTP.
  NODE_ENV: z.enum(['production', 'development', 'test']).default('development'),
  // HTTP port the server listens on.
  PORT: intString(0, 65535).default(3000),
  // Public base address used in discovery, emails and redirects. Default http://localhost:$PORT.
  BASE_URL: urlString.optional(),
  // postgres:// URL. Unset: embedded PostgreSQL (the server runs it) under DATA_DIR.
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .optional(),
  // Connections per instance to PostgreSQL for queries (default 10; 5 on the embedded database); prepared statements
  // of the hot paths get half as many more on a pool of their own.
  DATABASE_POOL_MAX: intString(1, 1000).optional(),
  // Embedded database files and generated development secrets.
  DATA_DIR: z.string().min(1).default('./data'),
  // HS256 keys for access and refresh tokens; generated into DATA_DIR outside production.
  JWT_ACCESS_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  JWT_REFRESH_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  // `iss` of tokens and discovery.
  ISSUER: z.string().min(1).default('service-sso'),
  // JSON map app key -> base URL: the allow-list of post-login destinations.
  LOGIN_APPS: z.string().default('{}'),
  // App key used when only `path` is given; default the first key of LOGIN_APPS.
  DEFAULT_LOGIN_APP: z.string().optional(),
  // Per-IP limit on /api/*.
  RATE_LIMIT_WINDOW_MS: intString(1000, 86_400_000).default(900_000),
  RATE_LIMIT_MAX: intString(1, 10_000_000).default(300),
  // Redis for shared rate-limit counters across instances.
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// URL')
    .optional(),
  // Express `trust proxy` (number of hops, true/false, or a subnet list).
  TRUST_PROXY: z.string().optional(),
  // Created (or promoted) at start as a verified super_admin.
  BOOTSTRAP_ADMIN_EMAIL: z.email().optional(),
  BOOTSTRAP_ADMIN_PASSWORD: z.string().min(6).optional(),
  // bcrypt cost of user passwords.
  BCRYPT_ROUNDS: intString(4, 15).default(10),
  // Secure flag on cookies; default true in production.
  COOKIE_SECURE: boolString.optional(),
  // Domain attribute of the SSO cookies.
  COOKIE_DOMAIN: z.string().min(1).optional(),
  // pino level.
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // Bearer token for GET /metrics; unset: /metrics answers 404.
  METRICS_TOKEN: z.string().min(16).optional(),
  // CONTRACT §8: seconds within which a rotated refresh token presented again gets its unused successor (0 = strict).
  REFRESH_REUSE_GRACE_S: intString(0, 300).default(10),
  // CONTRACT §8: absolute session lifetime; rotation never extends a session past it.
  SESSION_MAX_AGE_DAYS: intString(1, 3650).default(90),
  // CONTRACT §8: allow plain-http client redirect URIs on non-loopback hosts (internal networks).
  ALLOW_HTTP_REDIRECT_URIS: boolString.default(false),
  // CONTRACT §9: secret from which the at-rest encryption key (signing keys, TOTP secrets) is derived;
  // default derived from JWT_REFRESH_SECRET.
  KEYS_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  // CONTRACT §9: `iss` of id_tokens and the OpenID discovery document; default BASE_URL.
  OIDC_ISSUER: urlString.optional(),
  // CONTRACT §9: id_token signing algorithm.
  ID_TOKEN_ALG: z.enum(['RS256', 'ES256']).default('RS256'),
  // Issue 13: audit events older than this are pruned.
  AUDIT_RETENTION_DAYS: intString(1, 36_500).default(180),
  // Issue 26: webhook deliveries one instance attempts at once (each one attempt of one delivery; PostgreSQL only).
  WEBHOOK_CONCURRENCY: intString(1, 200).default(16),
  // CONTRACT §13: per-IP budget of POST /api/oauth/register (on top of the /api limit): at most MAX per WINDOW_MS.
  CLIENT_REGISTRATION_RATE_LIMIT_MAX: intString(1, 1_000_000).default(10),
  CLIENT_REGISTRATION_RATE_LIMIT_WINDOW_MS: intString(1000, 86_400_000).default(3_600_000),
  // CONTRACT §13: comma-separated host names whose metadata documents may live on private, loopback or link-local
  // addresses (an internal tool's document); https stays required. Names only: no scheme, port or path.
  CIMD_ALLOWED_HOSTS: z
    .string()
    .default('')
    .refine(
      (v) =>
        v
          .split(',')
          .map((h) => h.trim())
          .filter(Boolean)
          .every((h) => HOST_NAME.test(h) || /^\[[0-9a-fA-F:.]+\]$/.test(h)),
      'must be comma-separated host names (no scheme, port or path)',
    ),
  // Password policy (docs/passwords.md): `hibp` also looks passwords up in Have I Been Pwned's range API by
  // k-anonymity when the policy's breached_check is on (2 s, fails open); `off` uses the shipped list only.
  PASSWORD_BREACH_API: z.enum(['off', 'hibp']).default('off'),
  // Base URL of the Pwned Passwords range API (a mirror, or a local one in tests).
  PASSWORD_BREACH_API_URL: urlString.default('https://api.pwnedpasswords.com'),
  // The runtime settings (registration, branding, CORS origins, SMTP, …) are pinned by their own variables:
  // src/declarations/settings.ts parses them (pinnedSettings), docs/settings.md lists them.
});

/** The names of the environment variables the service reads (the start-up configuration's list names each value's). */
export const ENVIRONMENT_VARIABLES: ReadonlySet<string> = new Set(Object.keys(envSchema.shape));

export interface Config {
  nodeEnv: 'production' | 'development' | 'test';
  isProduction: boolean;
  port: number;
  baseUrl: string;
  baseOrigin: string;
  databaseUrl?: string;
  /** DATABASE_POOL_MAX: the query pool's size per instance (the statement pool gets half as many); unset, createDb's default. */
  databasePoolMax?: number;
  dataDir: string;
  jwtAccessSecret: string;
  jwtRefreshSecret: string;
  issuer: string;
  /** Audience of every token (spec §2.1). */
  audience: string;
  loginApps: Readonly<Record<string, string>>;
  defaultLoginApp?: string;
  rateLimitWindowMs: number;
  rateLimitMax: number;
  redisUrl?: string;
  trustProxy?: boolean | number | string;
  bootstrapAdminEmail?: string;
  bootstrapAdminPassword?: string;
  bcryptRounds: number;
  cookieSecure: boolean;
  cookieDomain?: string;
  logLevel: string;
  metricsToken?: string;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  accessCookieMaxAgeSeconds: number;
  refreshCookieMaxAgeSeconds: number;
  authorizationCodeTtlSeconds: number;
  pendingAuthorizationTtlSeconds: number;
  oauthExpiresInSeconds: number;
  loginTokenTtlSeconds: number;
  verifyEmailTtlSeconds: number;
  setPasswordTtlSeconds: number;
  refreshReuseGraceSeconds: number;
  sessionMaxAgeDays: number;
  allowHttpRedirectUris: boolean;
  /** Secret the at-rest encryption key is derived from (lib/sealed.ts). */
  keysSecret: string;
  oidcIssuer: string;
  idTokenAlg: 'RS256' | 'ES256';
  auditRetentionDays: number;
  webhookConcurrency: number;
  clientRegistrationRateLimit: { windowMs: number; max: number };
  /** Lower-case host names (IPv6 literals without brackets) exempt from the private-address check. */
  cimdAllowedHosts: readonly string[];
  /** docs/passwords.md: whether the password policy's breached check also asks Have I Been Pwned. */
  passwordBreachApi: 'off' | 'hibp';
  passwordBreachApiUrl: string;
  /**
   * CONTRACT §18: the runtime settings the environment pins (a variable set and not empty). Read the settings in force
   * through `ctx.settings.current` (services/settings/live-settings.ts), never from here.
   */
  pinnedSettings: Readonly<Partial<SettingValues>>;
}

export type { Brand } from '../lib/palette';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

function fail(variable: string, message: string): never {
  throw new ConfigError(`${variable}: ${message}`);
}

function parseLoginApps(raw: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    fail('LOGIN_APPS', 'must be a JSON object of app key to base URL');
  }
  const result = z.record(z.string().min(1), urlString).safeParse(parsed);
  if (!result.success) fail('LOGIN_APPS', 'must be a JSON object of app key to http(s) base URL');
  const apps: Record<string, string> = {};
  for (const [key, value] of Object.entries(result.data)) apps[key] = new URL(value).origin;
  return apps;
}

function parseTrustProxy(raw: string | undefined): boolean | number | string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  if (/^\d+$/.test(raw)) return Number(raw);
  return raw;
}

const DEV_SECRETS_JSON = z.object({ access: z.string().optional(), refresh: z.string().optional() });

/** Development secrets are generated once and kept in DATA_DIR so that restarts keep sessions valid. */
function loadDevSecrets(dataDir: string): { access: string; refresh: string } {
  const file = path.join(dataDir, 'dev-secrets.json');
  try {
    const stored = parseJsonText(fs.readFileSync(file, 'utf8'), DEV_SECRETS_JSON);
    if (stored?.access && stored.refresh) return { access: stored.access, refresh: stored.refresh };
  } catch {
    // not there yet: generate below
  }
  const secrets = { access: randomBytes(48).toString('base64url'), refresh: randomBytes(48).toString('base64url') };
  fs.mkdirSync(dataDir, { recursive: true });
  fs.writeFileSync(file, JSON.stringify(secrets), { mode: 0o600 });
  return secrets;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const cleaned: Record<string, string> = {};
  for (const key of Object.keys(envSchema.shape)) {
    const value = env[key];
    if (value !== undefined && value !== '') cleaned[key] = value;
  }
  const result = envSchema.safeParse(cleaned);
  if (!result.success) {
    const issue = result.error.issues[0];
    fail(String(issue?.path[0] ?? 'environment'), issue?.message ?? 'is invalid');
  }
  const e = result.data;
  let pinned: Partial<SettingValues>;
  try {
    pinned = pinnedSettings(env);
  } catch (err) {
    if (err instanceof SettingEnvError) fail(err.variable, err.problem);
    throw err;
  }
  const isProduction = e.NODE_ENV === 'production';
  const baseUrl = (e.BASE_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, '');
  const dataDir = path.resolve(e.DATA_DIR);

  // Production needs both; elsewhere a missing one comes from DATA_DIR/dev-secrets.json.
  const generated = !isProduction && (!e.JWT_ACCESS_SECRET || !e.JWT_REFRESH_SECRET) ? loadDevSecrets(dataDir) : undefined;
  const jwtAccessSecret =
    e.JWT_ACCESS_SECRET ?? generated?.access ?? fail('JWT_ACCESS_SECRET', 'is required in production (at least 32 characters)');
  const jwtRefreshSecret =
    e.JWT_REFRESH_SECRET ?? generated?.refresh ?? fail('JWT_REFRESH_SECRET', 'is required in production (at least 32 characters)');
  if (jwtAccessSecret === jwtRefreshSecret) fail('JWT_REFRESH_SECRET', 'must differ from JWT_ACCESS_SECRET');

  const loginApps = parseLoginApps(e.LOGIN_APPS);
  const defaultLoginApp = e.DEFAULT_LOGIN_APP ?? Object.keys(loginApps)[0];
  if (e.DEFAULT_LOGIN_APP && !(e.DEFAULT_LOGIN_APP in loginApps)) {
    fail('DEFAULT_LOGIN_APP', 'must be a key of LOGIN_APPS');
  }
  if ((e.BOOTSTRAP_ADMIN_EMAIL === undefined) !== (e.BOOTSTRAP_ADMIN_PASSWORD === undefined)) {
    fail(e.BOOTSTRAP_ADMIN_EMAIL ? 'BOOTSTRAP_ADMIN_PASSWORD' : 'BOOTSTRAP_ADMIN_EMAIL', 'must be set together');
  }

  const config: Config = {
    nodeEnv: e.NODE_ENV,
    isProduction,
    port: e.PORT,
    baseUrl,
    baseOrigin: new URL(baseUrl).origin,
    databaseUrl: e.DATABASE_URL,
    databasePoolMax: e.DATABASE_POOL_MAX,
    dataDir,
    jwtAccessSecret,
    jwtRefreshSecret,
    issuer: e.ISSUER,
    audience: 'service',
    loginApps: Object.freeze(loginApps),
    defaultLoginApp,
    rateLimitWindowMs: e.RATE_LIMIT_WINDOW_MS,
    rateLimitMax: e.RATE_LIMIT_MAX,
    redisUrl: e.REDIS_URL,
    trustProxy: parseTrustProxy(e.TRUST_PROXY),
    bootstrapAdminEmail: e.BOOTSTRAP_ADMIN_EMAIL?.trim().toLowerCase(),
    bootstrapAdminPassword: e.BOOTSTRAP_ADMIN_PASSWORD,
    bcryptRounds: e.BCRYPT_ROUNDS,
    cookieSecure: e.COOKIE_SECURE ?? isProduction,
    cookieDomain: e.COOKIE_DOMAIN,
    logLevel: e.LOG_LEVEL,
    metricsToken: e.METRICS_TOKEN,
    accessTokenTtlSeconds: 24 * 3600,
    refreshTokenTtlSeconds: 30 * 24 * 3600,
    accessCookieMaxAgeSeconds: 3600,
    refreshCookieMaxAgeSeconds: 7 * 24 * 3600,
    authorizationCodeTtlSeconds: 600,
    pendingAuthorizationTtlSeconds: 600,
    oauthExpiresInSeconds: 3600,
    loginTokenTtlSeconds: 300,
    verifyEmailTtlSeconds: 24 * 3600,
    setPasswordTtlSeconds: 3600,
    refreshReuseGraceSeconds: e.REFRESH_REUSE_GRACE_S,
    sessionMaxAgeDays: e.SESSION_MAX_AGE_DAYS,
    allowHttpRedirectUris: e.ALLOW_HTTP_REDIRECT_URIS,
    keysSecret: e.KEYS_SECRET ?? `keys:${jwtRefreshSecret}`,
    oidcIssuer: (e.OIDC_ISSUER ?? baseUrl).replace(/\/+$/, ''),
    idTokenAlg: e.ID_TOKEN_ALG,
    auditRetentionDays: e.AUDIT_RETENTION_DAYS,
    webhookConcurrency: e.WEBHOOK_CONCURRENCY,
    clientRegistrationRateLimit: Object.freeze({
      windowMs: e.CLIENT_REGISTRATION_RATE_LIMIT_WINDOW_MS,
      max: e.CLIENT_REGISTRATION_RATE_LIMIT_MAX,
    }),
    cimdAllowedHosts: Object.freeze(
      e.CIMD_ALLOWED_HOSTS.split(',')
        .map((h) =>
          h
            .trim()
            .toLowerCase()
            .replace(/^\[|\]$/g, ''),
        )
        .filter(Boolean),
    ),
    passwordBreachApi: e.PASSWORD_BREACH_API,
    passwordBreachApiUrl: e.PASSWORD_BREACH_API_URL,
    pinnedSettings: Object.freeze(pinned),
  };
  return Object.freeze(config);
}

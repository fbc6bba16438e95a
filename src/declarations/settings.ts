import { z } from 'zod';
import { LOCALES, sayIssue } from '../i18n';
import { brandColorProblem, DEFAULT_BRAND_COLOR } from '../lib/palette';

/**
 * CONTRACT §18: every setting an administrator changes at runtime, declared once. A declaration drives the REST API
 * (`GET|PATCH /api/admin/settings` and their OpenAPI schema), the console's Settings form, the docs table
 * (docs/settings.md, checked by test/unit/settings-declarations.test.ts) and the environment variable that pins it
 * (the name in upper case). The value of a setting is what `schema` outputs; the environment's text goes through
 * `env` first (a boolean, a comma-separated list, JSON, a number or the text as it is).
 */

/** How the pinning variable's text becomes a candidate value for `schema`. */
export type EnvFormat = 'text' | 'boolean' | 'integer' | 'list' | 'json';

/** The console form's sections, in order. */
export const SETTING_GROUPS = ['sign_up', 'security', 'browser', 'branding', 'mail'] as const;
export type SettingGroup = (typeof SETTING_GROUPS)[number];

export interface SettingDeclaration<N extends string = string, S extends z.ZodType = z.ZodType> {
  readonly name: N;
  /** Validates (and normalises) a value from PATCH, the database and the environment. */
  readonly schema: S;
  readonly default: z.output<S>;
  readonly env: EnvFormat;
  /** A secret is write-only: GET answers `value: null` and `set`. */
  readonly secret: boolean;
  readonly group: SettingGroup;
  /**
   * Security-sensitive (docs/settings.md, "Who may change what"): changing it can hand an account, a mail or the browser
   * session to someone else, or lower a protection. Changing it needs MANAGE_SETTINGS, which only super_admin holds by
   * default; the others need only the route's system:manage_users. Every declaration decides (no default).
   */
  readonly sensitive: boolean;
  /** Docs: the feature that will read a setting which is declared and stored before that feature exists. */
  readonly readLater?: string;
}

/** The permission that changes a sensitive setting and sends a test mail (migration 20261129171000_settings_permission). */
export const MANAGE_SETTINGS = 'system:manage_settings';

function setting<const N extends string, S extends z.ZodType>(
  declaration: Omit<SettingDeclaration<N, S>, 'secret'> & { secret?: boolean },
): SettingDeclaration<N, S> {
  return { ...declaration, secret: declaration.secret ?? false };
}

const HEX_COLOUR = /^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;

/** `#abc` -> `#aabbcc`, lowercase. */
export function expandHex(hex: string): string {
  const h = hex.slice(1).toLowerCase();
  return `#${h.length === 3 ? [...h].map((c) => c + c).join('') : h}`;
}

const brandColor = z
  .string()
  .regex(HEX_COLOUR, 'must be a CSS hex colour such as #1d4ed8')
  .transform(expandHex)
  .superRefine((colour, check) => {
    const problem = brandColorProblem(colour);
    // The English names the failing pair and its ratio; the page's language says what to do.
    if (problem)
      check.addIssue({ code: 'custom', message: problem, params: { said: { key: 'settingColourContrast', params: { colour } } } });
  });

/** Host names (or IP addresses) as a URL's hostname spells them: no scheme, port or path; lower case. */
const hostNames = z
  .array(
    z
      .string()
      .trim()
      .toLowerCase()
      .max(253)
      .regex(/^(?:[a-z0-9_-]+\.)*[a-z0-9_-]+$|^\[?[0-9a-f:.]+\]?$/, 'must be a host name (no scheme, port or path)')
      // An IPv6 literal as the outbound check compares it: without brackets.
      .transform((host) => host.replace(/^\[(.*)\]$/, '$1')),
  )
  .max(100, 'at most 100 host names')
  .transform((hosts) => [...new Set(hosts)]);

/** A browser origin (`https://app.example.com`, `http://localhost:5173`): scheme, host and port, nothing else. */
export const webOrigin = z
  .string()
  .trim()
  .max(2048)
  .superRefine((value, check) => {
    if (!z.url({ protocol: /^https?$/ }).safeParse(value).success)
      check.addIssue({ code: 'custom', ...sayIssue('settingOrigin', { value }) });
  })
  .transform((value) => new URL(value).origin);

export const webOrigins = z
  .array(webOrigin)
  .max(100, 'at most 100 origins')
  .transform((list) => [...new Set(list)]);

/** CONTRACT §22: the password policy (read by the password rules when they land). */
export const passwordPolicySchema = z
  .object({
    min_length: z.number().int().min(6, 'min_length must be at least 6').max(72, 'min_length must be at most 72').default(6),
    breached_check: z.boolean().default(false),
    reject_email_local_part: z.boolean().default(false),
  })
  .strict();

export const SETTINGS = [
  setting({
    name: 'registration',
    sensitive: true,
    schema: z.enum(['open', 'closed'], { error: 'must be open or closed' }),
    default: 'open',
    env: 'text',
    group: 'sign_up',
  }),
  setting({
    name: 'client_registration',
    sensitive: true,
    schema: z.enum(['off', 'token', 'open'], { error: 'must be off, token or open' }),
    default: 'off',
    env: 'text',
    group: 'sign_up',
  }),
  setting({ name: 'client_id_metadata_documents', sensitive: true, schema: z.boolean(), default: false, env: 'boolean', group: 'sign_up' }),
  setting({
    name: 'invitation_ttl_hours',
    sensitive: false,
    schema: z.number().int('must be a whole number').min(1, 'must be at least 1').max(720, 'must be at most 720'),
    default: 72,
    env: 'integer',
    group: 'sign_up',
  }),
  setting({
    name: 'email_sign_in',
    sensitive: true,
    schema: z.boolean(),
    default: true,
    env: 'boolean',
    group: 'sign_up',
  }),
  setting({ name: 'mfa_required_for_admins', sensitive: true, schema: z.boolean(), default: false, env: 'boolean', group: 'security' }),
  setting({
    name: 'password_policy',
    sensitive: true,
    schema: passwordPolicySchema,
    default: { min_length: 6, breached_check: false, reject_email_local_part: false },
    env: 'json',
    group: 'security',
  }),
  setting({
    name: 'require_pushed_authorization_requests',
    sensitive: true,
    schema: z.boolean(),
    default: false,
    env: 'boolean',
    group: 'security',
  }),
  // RFC 9449 §8, §9 (docs/dpop.md): every DPoP proof must carry a nonce this server handed out.
  setting({ name: 'dpop_nonce_required', sensitive: true, schema: z.boolean(), default: false, env: 'boolean', group: 'security' }),
  setting({ name: 'webhook_allow_private', sensitive: true, schema: z.boolean(), default: false, env: 'boolean', group: 'security' }),
  // CONTRACT §16, §18: upstream identity providers (and SAML metadata URLs) on private, loopback or link-local
  // addresses and over plain http (a lab, an IdP on the internal network); docs/federation.md.
  setting({ name: 'idp_allow_private', sensitive: true, schema: z.boolean(), default: false, env: 'boolean', group: 'security' }),
  // Host names of upstream providers exempt from the private-address check, still over https: narrower than the above.
  setting({ name: 'idp_allowed_hosts', sensitive: true, schema: hostNames, default: [], env: 'list', group: 'security' }),
  setting({ name: 'allowed_origins', sensitive: true, schema: webOrigins, default: [], env: 'list', group: 'browser' }),
  setting({
    name: 'brand_name',
    sensitive: false,
    schema: z.string().trim().min(1, 'must not be empty').max(80, 'must be at most 80 characters'),
    default: 'service-sso',
    env: 'text',
    group: 'branding',
  }),
  setting({
    name: 'brand_logo_url',
    sensitive: false,
    schema: z
      .url({ protocol: /^https$/, error: 'must be an https:// URL' })
      .max(2048)
      .nullable(),
    default: null,
    env: 'text',
    group: 'branding',
  }),
  setting({ name: 'brand_color', sensitive: false, schema: brandColor, default: DEFAULT_BRAND_COLOR, env: 'text', group: 'branding' }),
  setting({
    name: 'default_locale',
    sensitive: false,
    schema: z.enum(LOCALES, { error: `must be one of ${LOCALES.join(', ')}` }),
    default: 'en',
    env: 'text',
    group: 'branding',
  }),
  setting({
    name: 'smtp_url',
    sensitive: true,
    schema: z
      .string()
      .max(2048)
      .regex(/^smtps?:\/\/[^\s]+$/, 'must be an smtp:// or smtps:// URL')
      .nullable(),
    default: null,
    env: 'text',
    secret: true,
    group: 'mail',
  }),
  setting({
    name: 'mail_from',
    sensitive: true,
    schema: z.string().trim().min(3, 'must be at least 3 characters').max(320, 'must be at most 320 characters'),
    default: 'no-reply@localhost',
    env: 'text',
    group: 'mail',
  }),
] as const;

export type SettingDecl = (typeof SETTINGS)[number];
export type SettingName = SettingDecl['name'];
/** The value of every setting, as the code reads it (`ctx.settings.current.values`). */
export type SettingValues = { [D in SettingDecl as D['name']]: z.output<D['schema']> };

export const SETTING_NAMES: readonly SettingName[] = SETTINGS.map((d) => d.name);
const BY_NAME: ReadonlyMap<string, SettingDecl> = new Map(SETTINGS.map((d) => [d.name, d]));

export function settingDeclaration(name: string): SettingDecl | undefined {
  return BY_NAME.get(name);
}

/** The environment variable that pins a setting (CONTRACT §18: the name in upper case). */
export function envVarOf(name: string): string {
  return name.toUpperCase();
}

const TRUE = new Set(['true', '1', 'yes']);
const FALSE = new Set(['false', '0', 'no']);

/** The candidate value of a variable's text, before `schema`; a message when the text cannot be read at all. */
function fromEnv(format: EnvFormat, raw: string): { value: unknown } | { problem: string } {
  switch (format) {
    case 'text':
      return { value: raw };
    case 'boolean':
      if (TRUE.has(raw)) return { value: true };
      if (FALSE.has(raw)) return { value: false };
      return { problem: 'must be true or false' };
    case 'integer':
      return /^\d+$/.test(raw) ? { value: Number(raw) } : { problem: 'must be a whole number' };
    case 'list':
      return {
        value: raw
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      };
    case 'json':
      try {
        const value: unknown = JSON.parse(raw);
        return { value };
      } catch {
        return { problem: 'must be JSON' };
      }
  }
}

export class SettingEnvError extends Error {
  constructor(
    readonly variable: string,
    readonly problem: string,
  ) {
    super(`${variable}: ${problem}`);
  }
}

/** The first message of a failed parse, prefixed with the path inside the value when there is one. */
export function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  const path = issue.path.filter((p) => typeof p === 'string');
  const where = path.length ? `${path.join('.')}: ` : '';
  return `${where}${issue.message}`;
}

/**
 * The settings the environment pins (a variable set and not empty wins and locks its setting), parsed with the
 * declarations; a bad value throws SettingEnvError naming the variable (the process does not start).
 */
export function pinnedSettings(env: NodeJS.ProcessEnv): Partial<SettingValues> {
  const pinned: Record<string, unknown> = {};
  for (const declaration of SETTINGS) {
    const variable = envVarOf(declaration.name);
    const raw = env[variable];
    if (raw === undefined || raw.trim() === '') continue;
    const candidate = fromEnv(declaration.env, raw.trim());
    if ('problem' in candidate) throw new SettingEnvError(variable, candidate.problem);
    const parsed = declaration.schema.safeParse(candidate.value);
    if (!parsed.success) throw new SettingEnvError(variable, firstIssue(parsed.error));
    pinned[declaration.name] = parsed.data;
  }
  return pinned as Partial<SettingValues>;
}

/** Every setting's default, as one object. */
export function defaultSettings(): SettingValues {
  return Object.fromEntries(SETTINGS.map((d) => [d.name, d.default])) as SettingValues;
}

/**
 * PATCH /api/admin/settings's body: any of the settings, each validated by its declaration; an unknown name is
 * refused (the route names it). Its OpenAPI schema lists every setting with its type.
 */
export const settingsPatchSchema = z
  .strictObject(Object.fromEntries(SETTINGS.map((d) => [d.name, (d.schema as z.ZodType).optional()])))
  .meta({ id: 'SettingsChange' });

/** One entry of GET /api/admin/settings (CONTRACT §18), per setting: its value's type, its variable, secret or not. */
export const settingEntrySchema = z
  .union(
    SETTINGS.map((d) =>
      z.strictObject({
        name: z.literal(d.name),
        value: d.secret ? z.null() : (d.schema as z.ZodType),
        source: z.enum(['environment', 'stored', 'default']),
        read_only: z.boolean(),
        env_var: z.literal(envVarOf(d.name)),
        secret: z.literal(d.secret),
        sensitive: z.literal(d.sensitive),
        ...(d.secret ? { set: z.boolean() } : {}),
      }),
    ) as unknown as [z.ZodType, z.ZodType, ...z.ZodType[]],
  )
  .meta({ id: 'Setting' });

/** Where a setting's value in force comes from. */
export type SettingSource = 'environment' | 'stored' | 'default';

/** One setting as GET /api/admin/settings answers it (CONTRACT §18). A secret's value is never shown: `set` says. */
export interface SettingEntry {
  name: SettingName;
  value: unknown;
  source: SettingSource;
  read_only: boolean;
  env_var: string;
  secret: boolean;
  /** Changing it needs system:manage_settings (docs/settings.md). */
  sensitive: boolean;
  set?: boolean;
}

import { messagesFor, saidOfIssue, say } from '../../i18n';
import { withTransaction } from '../../db';
import { bumpSettingsVersion, loadStoredSettings, notifySettingsChanged, storeSetting } from '../../db/repositories/settings.repo';
import { badRequest, forbidden, type ErrorDetail } from '../../errors';
import { mailEnv } from '../mail';
import type { ServiceContext } from '../context';
import { hasPermission, type Principal } from '../principal';
import {
  envVarOf,
  firstIssue,
  MANAGE_SETTINGS,
  SETTINGS,
  settingDeclaration,
  type SettingEntry,
  type SettingDecl,
  type SettingName,
  type SettingValues,
} from '../../declarations/settings';
import { SETTINGS_CHANNEL } from './live-settings';

/** How a secret appears in the audit trail: whether it is set, never its value. */
const MASKED = '••••••';

/** Every declared setting as it is in force now on this instance (after catching up with what is stored). */
export async function listSettings(ctx: ServiceContext): Promise<SettingEntry[]> {
  await ctx.settings.refresh();
  const { values, sources } = ctx.settings.current;
  return SETTINGS.map((declaration) => {
    const value: unknown = values[declaration.name];
    const base = {
      name: declaration.name,
      source: sources[declaration.name],
      read_only: sources[declaration.name] === 'environment',
      env_var: envVarOf(declaration.name),
      secret: declaration.secret,
      sensitive: declaration.sensitive,
    };
    return declaration.secret ? { ...base, value: null, set: value !== null && value !== undefined } : { ...base, value };
  });
}

/**
 * Validates every named setting first (an unknown name, one the environment pins, or a bad value: 400
 * validation_error naming it, and the variable for a pinned one; nothing is stored), then refuses a sensitive one to a
 * caller without system:manage_settings (403 forbidden naming it; nothing is stored), then stores them in one
 * transaction that bumps the version, notifies the other instances on commit and records `settings.changed` with
 * before and after (secrets masked). This instance applies the change before answering.
 */
export async function changeSettings(ctx: ServiceContext, principal: Principal, input: Record<string, unknown>): Promise<SettingEntry[]> {
  const problems: ErrorDetail[] = [];
  const changes: Array<{ name: SettingName; declaration: SettingDecl; value: unknown }> = [];
  for (const [name, raw] of Object.entries(input)) {
    const declaration = settingDeclaration(name);
    if (!declaration) {
      problems.push({ path: name, ...say('settingUnknown', { name }) });
      continue;
    }
    if (name in ctx.settings.pinned) {
      const variable = envVarOf(name);
      problems.push({ path: name, ...say('settingPinned', { name, variable }) });
      continue;
    }
    const parsed = declaration.schema.safeParse(raw);
    if (!parsed.success) {
      // In English the setting's name comes first; beside its field, the catalogue's sentence of the issue is enough.
      const said = saidOfIssue(parsed.error.issues[0]);
      problems.push({ path: name, message: `${name}: ${firstIssue(parsed.error)}`, ...(said ? { said } : {}) });
      continue;
    }
    changes.push({ name: declaration.name, declaration, value: parsed.data });
  }
  if (!problems.length && !changes.length) problems.push({ path: '(root)', ...say('settingsNone') });
  if (problems.length) throw badRequest(problems.map((p) => p.message).join('; '), problems);
  // A sensitive setting needs system:manage_settings (not only the route's system:manage_users): nothing is stored.
  const refused = changes.filter(({ declaration }) => declaration.sensitive).map(({ name }) => name);
  if (refused.length && !hasPermission(principal, MANAGE_SETTINGS))
    throw forbidden(`Changing ${refused.join(', ')} needs the permission ${MANAGE_SETTINGS}`);

  await withTransaction(ctx.db, async (trx) => {
    // The version row is locked until commit: concurrent changes queue here, each reading what the previous stored.
    const version = await bumpSettingsVersion(trx);
    const stored = await loadStoredSettings(trx);
    const now = ctx.clock.now();
    const audited: Array<{ name: string; before: unknown; after: unknown }> = [];
    for (const { name, declaration, value } of changes) {
      const previous = name in stored.values ? declaration.schema.safeParse(stored.values[name]) : undefined;
      const before: unknown = previous?.success ? previous.data : declaration.default;
      await storeSetting(trx, name, value, principal.userId, now);
      if (JSON.stringify(before) === JSON.stringify(value)) continue;
      audited.push(
        declaration.secret
          ? { name, before: before === null ? null : MASKED, after: value === null ? null : MASKED }
          : { name, before, after: value },
      );
    }
    await notifySettingsChanged(trx, SETTINGS_CHANNEL, version);
    await ctx.events.record(trx, { type: 'settings.changed', detail: { changes: audited } });
  });
  await ctx.settings.refresh();
  return listSettings(ctx);
}

/** CONTRACT §18: a test mail through the SMTP settings in force, in the administrator's language; queued (202). */
export function sendTestMail(ctx: ServiceContext, to: string): void {
  const env = mailEnv(ctx);
  const t = messagesFor(env.locale).settingsCatalogue;
  const values: Readonly<SettingValues> = ctx.settings.current.values;
  ctx.mailer.send({
    to,
    subject: t.testMailSubject(env.brand.name),
    text: t.testMailText(env.brand.name, values.mail_from),
  });
}

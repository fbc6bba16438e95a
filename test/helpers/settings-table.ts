import { z } from 'zod';
import { en } from '../../src/i18n/en';
import { envVarOf, SETTINGS, type SettingDecl } from '../../src/declarations/settings';

/**
 * The settings table of docs/settings.md, built from the declarations (src/declarations/settings.ts) and the
 * English catalogue: test/unit/settings-declarations.test.ts checks the document holds exactly this table.
 * Regenerate with `npx tsx test/helpers/settings-table.ts`.
 */
export function settingsTable(): string {
  const rows = SETTINGS.map((d) => {
    const { label, description } = en.settingsCatalogue[d.name];
    const notes = [
      d.secret ? 'Write-only: never answered, audited masked.' : '',
      d.sensitive ? 'Sensitive: changing it needs `system:manage_settings`.' : '',
      d.readLater ? `Stored and validated now; read by ${d.readLater} once that lands.` : '',
    ].filter(Boolean);
    const meaning = [`**${label}.**`, description, ...notes].join(' ').replaceAll('|', '\\|');
    return `| \`${d.name}\` | \`${envVarOf(d.name)}\` | ${typeOf(d)} | ${defaultOf(d)} | ${meaning} |`;
  });
  return ['| Setting | Variable | Type | Default | Meaning |', '| --- | --- | --- | --- | --- |', ...rows].join('\n');
}

type Json = Record<string, unknown>;

function typeOf(d: SettingDecl): string {
  const schema = z.toJSONSchema(d.schema, { io: 'input', unrepresentable: 'any' }) as Json;
  const variants = (schema.anyOf as Json[] | undefined) ?? [schema];
  const nullable = variants.some((v) => v.type === 'null');
  const main = variants.find((v) => v.type !== 'null') ?? {};
  let text: string;
  if (Array.isArray(main.enum)) text = (main.enum as string[]).map((v) => `\`${v}\``).join(' \\| ');
  else if (main.type === 'boolean') text = 'boolean';
  else if (main.type === 'integer') text = `integer ${String(main.minimum)}–${String(main.maximum)}`;
  else if (main.type === 'array')
    text = `list of ${d.name.endsWith('_hosts') ? 'host names' : 'origins'} (comma-separated in the variable)`;
  else if (main.type === 'object')
    text = `object (JSON in the variable): ${Object.keys(main.properties as Json)
      .map((k) => `\`${k}\``)
      .join(', ')}`;
  else if (main.format === 'uri') text = 'https URL';
  else text = 'text';
  return nullable ? `${text} or empty` : text;
}

function defaultOf(d: SettingDecl): string {
  const value: unknown = d.default;
  if (value === null) return 'unset';
  if (Array.isArray(value)) return value.length ? `\`${value.join(',')}\`` : 'empty';
  if (typeof value === 'object') return `\`${JSON.stringify(value)}\``;
  return `\`${String(value)}\``;
}

if (require.main === module) process.stdout.write(`${settingsTable()}\n`);

import { z } from 'zod';
import { lines } from '../../routes/console/console-kit';
import { text } from '../../routes/pages/page-kit';
import { SETTINGS, type SettingDecl } from '../../declarations/settings';

/**
 * The Settings form's fields, derived from the setting declarations (docs/settings.md): each setting is one field, with
 * its text as shown (`was_<name>`, hidden) so that only what the admin changed is sent to PATCH /api/admin/settings.
 * An unchanged sensitive setting then needs no system:manage_settings, and an unchanged pinned one is never named.
 */
export type SettingControl = 'select' | 'number' | 'lines' | 'json' | 'text' | 'secret';

/** The choices of an enum or boolean setting; undefined for the others. */
export function choicesOf(d: SettingDecl): string[] | undefined {
  if (d.env === 'boolean') return ['true', 'false'];
  const schema = d.schema as z.ZodType;
  return schema instanceof z.ZodEnum ? (schema.options as string[]) : undefined;
}

export function controlOf(d: SettingDecl): SettingControl {
  if (d.secret) return 'secret';
  if (choicesOf(d)) return 'select';
  if (d.env === 'integer') return 'number';
  if (d.env === 'list') return 'lines';
  if (d.env === 'json') return 'json';
  return 'text';
}

/** A value as the form shows it. */
export function formTextOf(d: SettingDecl, value: unknown): string {
  if (d.secret || value === null || value === undefined) return '';
  switch (controlOf(d)) {
    case 'lines':
      return Array.isArray(value) ? value.map(String).join('\n') : '';
    case 'json':
      return JSON.stringify(value);
    default:
      return typeof value === 'string' ? value : JSON.stringify(value);
  }
}

/**
 * A field's text as the API value. What cannot be read stays the text, so that the API's schema refuses it with its
 * own message beside the field (e.g. "abc" for a number, broken JSON).
 */
export function valueOfFormText(d: SettingDecl, raw: string): unknown {
  const value = raw.trim();
  switch (controlOf(d)) {
    case 'select':
      return d.env === 'boolean' ? (value === 'true' ? true : value === 'false' ? false : value) : value;
    case 'number':
      return /^-?\d+$/.test(value) ? Number(value) : value;
    case 'lines':
      return lines(raw);
    case 'json':
      try {
        return JSON.parse(value) as unknown;
      } catch {
        return value;
      }
    default:
      // A nullable text (the logo URL) is cleared by an empty field.
      return value === '' && (d.schema as z.ZodType).safeParse(null).success ? null : value;
  }
}

/** The form: every setting, its shown text, the secret's "remove" box and which fields were editable. */
export const settingsForm = z.object({
  ...Object.fromEntries(SETTINGS.flatMap((d) => [[d.name, text(20_000)] as const, [`was_${d.name}`, text(20_000)] as const])),
  clear_smtp_url: text(10),
  editable: text(2_000),
});

/** The PATCH body: the editable settings whose value differs from what the form showed. */
export function changesOf(form: Record<string, string>): Record<string, unknown> {
  const editable = new Set(form.editable?.split(',') ?? []);
  const body: Record<string, unknown> = {};
  for (const d of SETTINGS) {
    if (!editable.has(d.name)) continue;
    const sent = form[d.name] ?? '';
    if (d.secret) {
      if (form[`clear_${d.name}`] === 'true') body[d.name] = null;
      else if (sent.trim() !== '') body[d.name] = sent.trim();
      continue;
    }
    const now = valueOfFormText(d, sent);
    const before = valueOfFormText(d, form[`was_${d.name}`] ?? '');
    if (JSON.stringify(now) !== JSON.stringify(before)) body[d.name] = now;
  }
  return body;
}

import fs from 'node:fs';
import path from 'node:path';
import { CATALOGUES, chooseLocale, LOCALES, localeFromUiLocales } from '../../src/i18n';

type Tree = { [key: string]: unknown };

/** Every leaf path of a catalogue with its kind (string, or function of n parameters). */
function shape(tree: Tree, prefix = ''): Map<string, string> {
  const out = new Map<string, string>();
  for (const [key, value] of Object.entries(tree)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (typeof value === 'function') out.set(path, `fn/${value.length}`);
    else if (typeof value === 'string') out.set(path, 'string');
    else for (const [p, k] of shape(value as Tree, path)) out.set(p, k);
  }
  return out;
}

describe('catalogues', () => {
  test('English and German are shipped', () => {
    expect(LOCALES).toEqual(['en', 'de']);
  });

  test.each(LOCALES.filter((l) => l !== 'en'))('%s has every key of the English catalogue, of the same kind, and no other', (locale) => {
    const reference = shape(CATALOGUES.en as unknown as Tree);
    const other = shape(CATALOGUES[locale] as unknown as Tree);
    expect([...other.entries()].sort()).toEqual([...reference.entries()].sort());
  });

  test('no message is empty, and a translated catalogue is not a copy of English', () => {
    for (const locale of LOCALES) {
      for (const [path, kind] of shape(CATALOGUES[locale] as unknown as Tree)) {
        if (kind === 'string')
          expect([path, path.split('.').reduce((n: any, k) => n[k], CATALOGUES[locale]).length > 0]).toEqual([path, true]);
      }
    }
    expect(CATALOGUES.de.login.title).not.toBe(CATALOGUES.en.login.title);
  });

  test('no German message is the English one, except loanwords and pure formats', () => {
    // Words German uses as they are, and messages that hold no words at all (the mail footer is "{brand} · {url}").
    const SAME_IN_GERMAN = new Set([
      'accountPage.passkeys',
      'mail.footer',
      'console.audit.app',
      'console.audit.ip',
      'console.audit.details.host',
      'console.audit.details.id',
      'console.audit.details.ids',
      'console.audit.details.ip',
      'console.audit.details.link',
      'console.audit.details.name',
      'console.audit.details.passkeys',
      'console.audit.details.scope',
      'console.audit.details.scopes',
      'console.audit.details.status',
      'console.audit.details.url',
      'console.audit.groups.oauth',
      'console.audit.groups.oidc',
      'console.audit.groups.saml',
      'console.audit.groups.scim',
      'console.audit.groups.webhook',
      'console.audit.idTitle',
      'console.audit.system',
      'console.roles.applicationLabel',
      'console.common.detail',
      'console.common.global',
      'console.common.name',
      'console.common.status',
      'console.user.app',
      'console.user.browser',
      'console.user.passkeys',
      'console.nav.saml',
      'console.nav.scim',
      'console.nav.webhooks',
      'console.webhooks.back',
      'console.webhooks.backToWebhook',
      'console.webhooks.named',
      'console.webhooks.title',
      'console.webhooks.url',
      'console.webhooks.webhook',
    ]);
    const leaves = (tree: Tree, prefix = ''): Array<[string, unknown]> =>
      Object.entries(tree).flatMap(([k, v]) => {
        const path = prefix ? `${prefix}.${k}` : k;
        return typeof v === 'object' && v !== null ? leaves(v as Tree, path) : [[path, v] as [string, unknown]];
      });
    // A function is compared by what it says for sample arguments (a string and numbers).
    const say = (m: unknown) =>
      typeof m === 'function' ? (m as (...a: unknown[]) => string)(...Array.from({ length: m.length }, (_, i) => (i === 0 ? 'Xy' : 3))) : m;
    const german = new Map(leaves(CATALOGUES.de as unknown as Tree));
    const same = leaves(CATALOGUES.en as unknown as Tree)
      .filter(([path, message]) => say(message) === say(german.get(path)))
      .map(([path]) => path);
    expect(same.sort()).toEqual([...SAME_IN_GERMAN].sort());
  });

  test('the views hold no English sentence of their own: visible text and labels come from the catalogues', () => {
    const dir = path.join(__dirname, '../../src/views');
    const files = fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.tsx'));
    expect(files.length).toBeGreaterThan(10);
    // Words between tags, a line of JSX text, or an attribute people read (label, title, aria-label, placeholder...).
    const english = [
      />\s*[A-Za-z][a-z]+( [a-z]+)+[.:]?\s*</,
      /^\s+[A-Z][a-z]+( [a-z]+)+[.:]?\s*$/,
      /\b(label|title|aria-label|placeholder|alt|caption|empty|hint|legend|yes|no|button)="[A-Za-z][a-z]+( [a-z]+)*"/,
    ];
    const found: string[] = [];
    for (const file of files) {
      fs.readFileSync(path.join(dir, file), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (/^\s*(\*|\/\/|\/\*)/.test(line) || line.includes('<code>')) return;
          if (english.some((re) => re.test(line))) found.push(`${file}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(found).toEqual([]);
  });

  test('plurals come from Intl.PluralRules', () => {
    expect(CATALOGUES.en.recovery.left(1)).toBe('1 unused recovery code left.');
    expect(CATALOGUES.en.recovery.left(0)).toBe('0 unused recovery codes left.');
    expect(CATALOGUES.de.recovery.left(1)).toBe('1 unbenutzter Wiederherstellungscode übrig.');
    expect(CATALOGUES.de.recovery.left(5)).toBe('5 unbenutzte Wiederherstellungscodes übrig.');
  });
});

describe('choosing the language', () => {
  const accepting = (result: string | false) => () => result;
  test.each([
    ['de', 'en', 'de'],
    ['fr de-AT', 'en', 'de'],
    ['DE', false, 'de'],
    ['fr', 'de', 'de'],
    ['not a tag !!', 'de', 'de'],
    [undefined, 'de', 'de'],
    [undefined, false, 'en'],
    ['', 'en', 'en'],
  ] as const)('ui_locales %p, Accept-Language negotiates %p -> %s', (ui, negotiated, expected) => {
    expect(chooseLocale(ui, accepting(negotiated))).toBe(expected);
  });

  test('ui_locales with no shipped language says nothing', () => {
    expect(localeFromUiLocales('fr ja')).toBeUndefined();
  });
});

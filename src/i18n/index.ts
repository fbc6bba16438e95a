import { de } from './de';
import { en, type Messages } from './en';
import type { Brand } from '../lib/palette';

export type { Messages, ValidationParams } from './en';
import type { ValidationParams } from './en';

/** CONTRACT §15: the shipped catalogues; the first is the fallback. */
export const CATALOGUES = { en, de } as const satisfies Record<string, Messages>;
export type Locale = keyof typeof CATALOGUES;
const isLocale = (value: string): value is Locale => Object.hasOwn(CATALOGUES, value);
export const LOCALES: readonly Locale[] = Object.keys(CATALOGUES).filter(isLocale);
export const DEFAULT_LOCALE: Locale = 'en';

/** What a hosted page or mail is rendered with (CONTRACT §15): its language, its catalogue and the branding. */
export interface PageEnv {
  locale: Locale;
  t: Messages;
  brand: Readonly<Brand>;
}

export function messagesFor(locale: Locale): Messages {
  return CATALOGUES[locale];
}

/**
 * The first shipped language of an OIDC `ui_locales` value (OIDC Core 3.1.2.1: space-separated BCP 47 tags in order
 * of preference); tags are parsed by Intl.Locale, so `de-AT` and `DE` both mean German. Undefined when none is shipped.
 */
export function localeFromUiLocales(uiLocales: string | undefined): Locale | undefined {
  if (!uiLocales) return undefined;
  for (const tag of uiLocales.split(' ').filter(Boolean).slice(0, 20)) {
    let language: string;
    try {
      language = new Intl.Locale(tag).language.toLowerCase();
    } catch {
      continue;
    }
    if (isLocale(language)) return language;
  }
  return undefined;
}

/**
 * The language of a page or mail: `ui_locales` wins (CONTRACT §15), else the best of Accept-Language as negotiated
 * by `accepts` (Express's req.acceptsLanguages, which also weighs q-values and matches `de-CH` to `de`), else `fallback`
 * (the default_locale setting, CONTRACT §18; English by default).
 */
export function chooseLocale(
  uiLocales: string | undefined,
  acceptsLanguages: (languages: string[]) => string | false,
  fallback: Locale = DEFAULT_LOCALE,
): Locale {
  const fromParameter = localeFromUiLocales(uiLocales);
  if (fromParameter) return fromParameter;
  // The fallback first: without Accept-Language (or with `*`) the negotiation picks the first language offered.
  const negotiated = acceptsLanguages([fallback, ...LOCALES.filter((l) => l !== fallback)]);
  return negotiated && isLocale(negotiated) ? negotiated : fallback;
}

/** A key of the catalogues' `validation` section: a refusal of the API's own rules (CONTRACT §2, §18). */
export type ValidationKey = keyof Messages['validation'];

export const isValidationKey = (key: string): key is ValidationKey => Object.hasOwn(en.validation, key);

/** The sentence of a validation key in a catalogue. */
export function validationText(t: Messages, key: ValidationKey, params: ValidationParams = {}): string {
  const entry: string | ((p: ValidationParams) => string) = t.validation[key];
  return typeof entry === 'string' ? entry : entry(params);
}

/**
 * A refusal declared where its rule is: the English `message` the JSON API answers and the key (`said`) the HTML
 * faces translate, e.g. `badRequest('Invalid client', [{ path: 'grant_types', ...say('grantTypeUnknown', { grant }) }])`.
 */
export function say(
  key: ValidationKey,
  params?: ValidationParams,
): { message: string; said: { key: ValidationKey; params?: ValidationParams } } {
  return { message: validationText(en, key, params), said: params ? { key, params } : { key } };
}

/** A schema's plain message (no values) is the catalogue's English sentence: its key, by that sentence. */
const KEY_OF_SENTENCE = new Map(
  Object.entries(en.validation).flatMap(([key, message]) =>
    isValidationKey(key) && typeof message === 'string' ? [[message, key] as const] : [],
  ),
);

/** The key of a plain validation message (one the catalogue declares word for word), if any. */
export const validationKeyOf = (message: string): ValidationKey | undefined => KEY_OF_SENTENCE.get(message);

/**
 * The catalogue key of a schema issue: the one a refinement gave it (`params: { said }`, built with `say`), else the
 * key of its plain message, which may start with the name of its field (the sentence is shown beside that field).
 */
export function saidOfIssue(
  issue: ({ code: string; message: string; path?: readonly PropertyKey[]; params?: Record<string, unknown> } & object) | undefined,
): { key: ValidationKey; params?: ValidationParams } | undefined {
  if (!issue) return undefined;
  const given: unknown = issue.code === 'custom' ? issue.params?.said : undefined;
  if (typeof given === 'object' && given !== null && 'key' in given && typeof given.key === 'string' && isValidationKey(given.key)) {
    const params = 'params' in given && typeof given.params === 'object' && given.params !== null ? stringsOf(given.params) : undefined;
    return params ? { key: given.key, params } : { key: given.key };
  }
  // A message may name its field first (`issuer must be an http(s) URL`): the rest is the catalogue's sentence.
  const field = `${(issue.path ?? []).filter((p) => typeof p !== 'symbol').join('.')} `;
  const key =
    validationKeyOf(issue.message) ?? (issue.message.startsWith(field) ? validationKeyOf(issue.message.slice(field.length)) : undefined);
  return key ? { key } : saidOfCheck(issue);
}

/**
 * A schema's own check by what it checks (zod's issue code and its bounds), whatever English message the schema gave
 * it (`jwks_uri must be a string`, `entity_id must not be empty`, zod's defaults): the sentence in the page's language
 * is then the catalogue's, shown beside the field it names. A refinement (`custom`) has only the key it was given.
 */
function saidOfCheck(issue: { code: string } & object): Said | undefined {
  const f = new Map<string, unknown>(Object.entries(issue));
  const n = (v: unknown) => (typeof v === 'number' || typeof v === 'bigint' ? String(v) : '');
  const text = (v: unknown) => (Array.isArray(v) ? v.map(String).join(', ') : '');
  switch (issue.code) {
    case 'invalid_type': {
      const expected = {
        string: 'fieldString',
        number: 'fieldNumber',
        int: 'fieldWholeNumber',
        boolean: 'fieldBoolean',
        array: 'fieldList',
      } as const;
      const e = f.get('expected');
      return { key: e === 'string' || e === 'number' || e === 'int' || e === 'boolean' || e === 'array' ? expected[e] : 'fieldInvalid' };
    }
    case 'too_big': {
      const max = n(f.get('maximum'));
      const origin = f.get('origin');
      if (origin === 'string') return { key: 'fieldMaxChars', params: { max } };
      if (origin === 'array' || origin === 'set') return { key: 'fieldMaxItems', params: { max } };
      return { key: 'fieldMax', params: { max } };
    }
    case 'too_small': {
      const min = n(f.get('minimum'));
      const origin = f.get('origin');
      if (origin === 'string') return min === '1' ? { key: 'fieldNotEmpty' } : { key: 'fieldMinChars', params: { min } };
      if (origin === 'array' || origin === 'set') return { key: 'fieldMinItems', params: { min } };
      return { key: 'fieldMin', params: { min } };
    }
    case 'invalid_format': {
      const format = f.get('format');
      if (format === 'url') return { key: 'fieldUrl' };
      if (format === 'email') return { key: 'fieldEmail' };
      if (format === 'uuid' || format === 'guid') return { key: 'fieldId' };
      return { key: 'fieldFormat' };
    }
    case 'invalid_value':
      return { key: 'fieldOneOf', params: { values: text(f.get('values')) } };
    case 'unrecognized_keys':
      return { key: 'fieldUnknown', params: { keys: text(f.get('keys')) } };
    case 'custom':
      return undefined;
    default:
      return { key: 'fieldInvalid' };
  }
}

const stringsOf = (o: object): Record<string, string> =>
  Object.fromEntries(Object.entries(o).filter((e): e is [string, string] => typeof e[1] === 'string'));

/** A refinement's issue with its catalogue key: `check.addIssue({ code: 'custom', ...sayIssue('settingOrigin', { value }) })`. */
export function sayIssue(key: ValidationKey, params?: ValidationParams): { message: string; params: { said: Said } } {
  const { message, said: given } = say(key, params);
  return { message, params: { said: given } };
}

type Said = { key: ValidationKey; params?: ValidationParams };

import type { Express, Request } from 'express';
import type { LiveSettings, SettingsSnapshot } from '../services/settings/live-settings';
import { chooseLocale, DEFAULT_LOCALE, messagesFor, type PageEnv } from '../i18n';
import { DEFAULT_BRAND_COLOR } from '../lib/palette';
import { fieldOf } from '../lib/thrown';

export type { PageEnv } from '../i18n';

/** English and the default branding: outside a request's scope (a CLI, a test rendering a view directly). */
export const DEFAULT_PAGE_ENV: PageEnv = {
  locale: DEFAULT_LOCALE,
  t: messagesFor(DEFAULT_LOCALE),
  brand: { name: 'service-sso', color: DEFAULT_BRAND_COLOR },
};

/** The page environment of a request (set by the scope's step), or the default one where no scope set it. */
export const pageEnvOf = (req: Request): PageEnv => req.pageEnv ?? DEFAULT_PAGE_ENV;

const single = (v: unknown): string | undefined => (typeof v === 'string' ? v.slice(0, 4096) : undefined);

/**
 * The `ui_locales` of this request: a parameter of the page itself (query or form), or of the OAuth/OIDC authorize
 * request a sign-in page carries in `return_to` (the sign-in pages keep return_to on every form, so the language
 * stays for the whole flow).
 */
export function uiLocalesOf(req: Request): string | undefined {
  const param = (name: string) => single(fieldOf(req.query, name)) ?? single(fieldOf(req.body, name));
  const direct = param('ui_locales');
  if (direct) return direct;
  const returnTo = param('return_to');
  if (!returnTo) return undefined;
  try {
    return new URL(returnTo, 'http://return-to.invalid').searchParams.get('ui_locales') ?? undefined;
  } catch {
    return undefined;
  }
}

/** The page environment of a request under the settings in force (brand, default_locale: CONTRACT §18). */
export function pageEnvFor(req: Request, settings: Pick<SettingsSnapshot, 'brand' | 'values'>): PageEnv {
  const locale = chooseLocale(uiLocalesOf(req), (languages) => req.acceptsLanguages(languages), settings.values.default_locale);
  return { locale, t: messagesFor(locale), brand: settings.brand };
}

const PAGE_ENV = Symbol('pageEnv');
type WithPageEnv = Request & { [PAGE_ENV]?: PageEnv };

/**
 * `req.pageEnv`, chosen on first read under the settings in force and kept for the rest of the request (issue 33: an
 * API call that renders no page and sends no mail pays nothing). Its first read is in a handler or an error handler,
 * after the body parsers (a form's ui_locales or return_to counts). Defined once on the app's request prototype.
 */
export function installLazyPageEnv(app: Express, settings: LiveSettings): void {
  Object.defineProperty(app.request, 'pageEnv', {
    configurable: true,
    get(this: WithPageEnv) {
      return (this[PAGE_ENV] ??= pageEnvFor(this, settings.current));
    },
    set(this: WithPageEnv, value: PageEnv) {
      this[PAGE_ENV] = value;
    },
  });
}

import { messagesFor, DEFAULT_LOCALE, type PageEnv } from '../i18n';
import { currentRequest } from '../lib/request-context';
import { DEFAULT_BRAND_COLOR } from '../lib/palette';

const FALLBACK: PageEnv = {
  locale: DEFAULT_LOCALE,
  t: messagesFor(DEFAULT_LOCALE),
  brand: { name: 'service-sso', color: DEFAULT_BRAND_COLOR },
};

/**
 * The language and branding of the page being rendered: the request's (middleware/page-env.ts), read from the
 * request context so that every view and shared component gets it without threading it through each signature.
 * Outside a request (a CLI, a test rendering a view directly) English and the default branding.
 */
export function pageEnv(): PageEnv {
  return currentRequest()?.pageEnv ?? FALLBACK;
}

import { messagesFor, DEFAULT_LOCALE, type PageEnv } from '../i18n';
import { currentRequest } from '../lib/request-context';
import { DEFAULT_BRAND_COLOR } from '../lib/palette';

const FALLBACK: PageEnv = {
  locale: DEFAULT_LOCALE,
  t: messagesFor(DEFAULT_LOCALE),
  brand: { name: 'service-sso', color: DEFAULT_BRAND_COLOR },
};

let onlyInRequests = false;

/**
 * Test runs of the app (src/app.ts, NODE_ENV=test): a page environment read where no request's code is running throws
 * instead of answering English. The request is known only to its synchronous code (lib/request-context.ts): a word
 * read after an `await` would silently be English in another language's page; the suites find every such read.
 */
export function pageEnvOnlyInRequests(): void {
  onlyInRequests = true;
}

/**
 * The language and branding of the page being rendered: the request's (middleware/page-env.ts), read from the request
 * whose code is running (lib/request-context.ts) so that every view and shared component gets it without threading it
 * through each signature. Outside a request (a CLI, a test rendering a view directly) English and the default branding.
 */
export function pageEnv(): PageEnv {
  const req = currentRequest();
  if (req) return req.pageEnv ?? FALLBACK;
  if (onlyInRequests) {
    throw new Error(
      'pageEnv() read outside a request: after an await? Read the words before it, from the handler input `env`, or inside runInRequest',
    );
  }
  return FALLBACK;
}

import { messagesFor, DEFAULT_LOCALE, type PageEnv } from '../i18n';
import { currentRequest } from '../lib/request-context';
import { DEFAULT_BRAND_COLOR } from '../lib/palette';

const FALLBACK: PageEnv = {
  locale: DEFAULT_LOCALE,
  t: messagesFor(DEFAULT_LOCALE),
  brand: { name: 'service-sso', color: DEFAULT_BRAND_COLOR },
};

/** What a page environment read outside a request does besides answering English (pageEnvOutsideRequests). */
let outsideRequest: ((error: Error) => void) | undefined;

const OUTSIDE_REQUEST =
  'pageEnv() read outside a request: after an await? Read the words before it, from the handler input `env`, or inside runInRequest';

/**
 * What a page environment read where no request's code is running does (src/app.ts): in test runs (NODE_ENV=test)
 * `'throw'`, so the suites find every such read; in production the read answers English and `report` is told once per
 * process, so a read the suites do not reach shows in the log instead of as a silently English word. The request is
 * known only to its synchronous code (lib/request-context.ts): a word read after an `await` is outside it.
 */
export function pageEnvOutsideRequests(react: 'throw' | ((error: Error) => void)): void {
  if (react === 'throw') {
    outsideRequest = (error) => {
      throw error;
    };
    return;
  }
  let told = false;
  outsideRequest = (error) => {
    if (told) return;
    told = true;
    react(error);
  };
}

/**
 * The language and branding of the page being rendered: the request's (middleware/page-env.ts), read from the request
 * whose code is running (lib/request-context.ts) so that every view and shared component gets it without threading it
 * through each signature. Outside a request (a CLI, a test rendering a view directly) English and the default branding.
 */
export function pageEnv(): PageEnv {
  const req = currentRequest();
  if (req) return req.pageEnv ?? FALLBACK;
  if (outsideRequest) outsideRequest(new Error(OUTSIDE_REQUEST));
  return FALLBACK;
}

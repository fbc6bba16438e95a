import { messagesFor, DEFAULT_LOCALE, type PageEnv } from '../i18n';
import { currentRequest } from '../lib/request-context';
import { DEFAULT_BRAND_COLOR } from '../lib/palette';

const FALLBACK: PageEnv = {
  locale: DEFAULT_LOCALE,
  t: messagesFor(DEFAULT_LOCALE),
  brand: { name: 'service-sso', color: DEFAULT_BRAND_COLOR },
};

/** A page environment read outside a request throws (test runs of the app): once set, for the whole process. */
let throwOutside = false;
/** Otherwise it is reported once per process, to the first app's log. */
let report: ((error: Error) => void) | undefined;
let told = false;

const OUTSIDE_REQUEST =
  'pageEnv() read outside a request: after an await? Read the words before it, from the handler input `env`, or inside runInRequest';

/**
 * What a page environment read where no request's code is running does besides answering English (src/app.ts): in
 * test runs (NODE_ENV=test) `'throw'`, so the suites find every such read (and an app made later in the same process,
 * whatever its NODE_ENV, does not turn that off); otherwise `report` is told once per process, so a read the suites do
 * not reach shows in the log instead of as a silently English word. The request is known only to its synchronous
 * code (lib/request-context.ts): a word read after an `await` is outside it.
 */
export function pageEnvOutsideRequests(react: 'throw' | ((error: Error) => void)): void {
  if (react === 'throw') throwOutside = true;
  else report ??= react;
}

/**
 * The language and branding of the page being rendered: the request's (middleware/page-env.ts), read from the request
 * whose code is running (lib/request-context.ts) so that every view and shared component gets it without threading it
 * through each signature. Outside a request (a CLI, a test rendering a view directly) English and the default branding.
 */
export function pageEnv(): PageEnv {
  const req = currentRequest();
  if (req) return req.pageEnv ?? FALLBACK;
  if (throwOutside) throw new Error(OUTSIDE_REQUEST);
  if (report && !told) {
    told = true;
    report(new Error(OUTSIDE_REQUEST));
  }
  return FALLBACK;
}

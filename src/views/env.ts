import { currentRequest } from '../lib/request-context';
import { DEFAULT_PAGE_ENV, type PageEnv } from '../middleware/page-env';

/**
 * The language and branding of the page being rendered: the request's (middleware/page-env.ts), read from the
 * request context so that every view and shared component gets it without threading it through each signature.
 * Outside a request (a CLI, a test rendering a view directly) English and the default branding.
 */
export function pageEnv(): PageEnv {
  return currentRequest()?.pageEnv ?? DEFAULT_PAGE_ENV;
}

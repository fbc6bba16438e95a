import type { Messages } from '../i18n';
import { pageEnv } from './env';
import { renderPage } from './layout';

function textsFor(t: Messages, status: number, retryAfterSeconds: number | undefined): { title: string; message: string } {
  const e = t.errors;
  if (status === 404) return { title: e.notFoundTitle, message: e.notFound };
  if (status === 429) return { title: e.tooManyTitle, message: e.tooMany(retryAfterSeconds) };
  if (status === 401 || status === 403) return { title: e.forbiddenTitle, message: e.forbidden };
  if (status === 503) return { title: e.unavailableTitle, message: e.unavailable };
  if (status >= 500) return { title: e.serverTitle, message: e.server };
  return { title: e.badRequestTitle, message: e.badRequest };
}

/** The page a browser gets for an error outside the JSON API (CONTRACT §15): what happened, in plain words, and a way on. */
export function renderErrorPage(status: number, retryAfterSeconds?: number): string {
  const { t } = pageEnv();
  const { title, message } = textsFor(t, status, retryAfterSeconds);
  return renderPage(
    { title },
    <>
      <h1>{title}</h1>
      <p role="alert">{message}</p>
      <p class="muted">
        <a href="/login">{t.errors.notFoundTitle === title ? t.common.home : t.common.backToSignIn}</a>
      </p>
    </>,
  );
}

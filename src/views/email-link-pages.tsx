import type { ComponentChildren } from 'preact';
import { pageEnv } from './env';
import { renderPage } from './layout';

/**
 * A page that only says something: its heading (the title unless given), one message (an alert where `alert` is set)
 * and a closing paragraph (muted unless `plainClosing`): a link on, or a hint at what to do next.
 */
export function renderMessagePage(p: {
  title: string;
  heading?: string;
  message: ComponentChildren;
  alert?: boolean;
  closing: ComponentChildren;
  plainClosing?: boolean;
}): string {
  return renderPage(
    { title: p.title },
    <>
      <h1>{p.heading ?? p.title}</h1>
      {p.alert ? (
        <p class="error" role="alert">
          {p.message}
        </p>
      ) : (
        <p>{p.message}</p>
      )}
      <p class={p.plainClosing ? undefined : 'muted'}>{p.closing}</p>
    </>,
  );
}

/** What an emailed link's page says once its action is done (set-password, verify-email, the first administrator). */
export function renderLinkDonePage(title: string, text: string): string {
  const { t } = pageEnv();
  return renderMessagePage({ title, message: text, closing: <a href="/login">{t.common.continueToSignIn}</a>, plainClosing: true });
}

/** An emailed link that is unknown, used or expired; `hint` says how to get a new one. */
export function renderLinkInvalidPage(hint: string): string {
  const { t } = pageEnv();
  return renderMessagePage({ title: t.common.linkInvalidTitle, message: t.common.linkInvalid, alert: true, closing: hint });
}

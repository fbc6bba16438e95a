import type { ComponentChildren } from 'preact';
import { pageEnv } from './env';
import { ButtonPost } from './kit';
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

/**
 * The page of an emailed link's action once it is done (set-password, verify-email, the first administrator), worded
 * by the catalogue section of that link (its `doneTitle` and `done`).
 */
export const linkDonePage = (says: () => { doneTitle: string; done: string }) => (): string => {
  const { doneTitle, done } = says();
  return renderMessagePage({
    title: doneTitle,
    message: done,
    closing: <a href="/login">{pageEnv().t.common.continueToSignIn}</a>,
    plainClosing: true,
  });
};

/** The page of an emailed link that is unknown, used or expired; its section's `invalidHint` says how to get a new one. */
export const linkInvalidPage = (says: () => { invalidHint: string }) => (): string => {
  const { t } = pageEnv();
  return renderMessagePage({ title: t.common.linkInvalidTitle, message: t.common.linkInvalid, alert: true, closing: says().invalidHint });
};

/**
 * An emailed link's question before it acts: the title, a sentence naming the address, an optional warning, and one
 * button that posts the link's token (a POST, so mail scanners that pre-fetch links burn nothing).
 */
export function renderLinkQuestion(p: {
  title: string;
  intro: string;
  warning?: string;
  action: string;
  button: string;
  fields: { csrf: string; token: string };
}): string {
  return renderPage(
    { title: p.title },
    <>
      <h1>{p.title}</h1>
      <p>{p.intro}</p>
      {p.warning ? (
        <p class="error" role="note">
          {p.warning}
        </p>
      ) : null}
      <ButtonPost action={p.action} fields={p.fields} label={p.button} />
    </>,
  );
}

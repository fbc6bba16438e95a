import { pageEnv } from './env';
import { renderPage } from './layout';

/** What an emailed link's page says once its action is done (set-password, verify-email). */
export function renderLinkDonePage(title: string, text: string): string {
  const { t } = pageEnv();
  return renderPage(
    { title },
    <>
      <h1>{title}</h1>
      <p>{text}</p>
      <p>
        <a href="/login">{t.common.continueToSignIn}</a>
      </p>
    </>,
  );
}

/** An emailed link that is unknown, used or expired; `hint` says how to get a new one. */
export function renderLinkInvalidPage(hint: string): string {
  const { t } = pageEnv();
  return renderPage(
    { title: t.common.linkInvalidTitle },
    <>
      <h1>{t.common.linkInvalidTitle}</h1>
      <p class="error" role="alert">
        {t.common.linkInvalid}
      </p>
      <p class="muted">{hint}</p>
    </>,
  );
}

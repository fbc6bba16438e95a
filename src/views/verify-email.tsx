import { pageEnv } from './env';
import { ButtonPost } from './kit';
import { linkDonePage, linkInvalidPage, renderMessagePage } from './email-link-pages';
import { renderPage } from './layout';

/** /verify-email with a live link: one button confirms the address (a POST, so mail scanners that pre-fetch links burn nothing). */
export function renderVerifyEmailForm(options: { email: string; token: string; csrf: string }): string {
  const { t } = pageEnv();
  return renderPage(
    { title: t.verify.title },
    <>
      <h1>{t.verify.title}</h1>
      <p>{t.verify.confirm(options.email)}</p>
      <ButtonPost action="/verify-email" fields={{ token: options.token, csrf: options.csrf }} label={t.verify.submit} />
    </>,
  );
}

export const renderVerifyEmailDone = linkDonePage(() => pageEnv().t.verify);

export const renderVerifyEmailInvalid = linkInvalidPage(() => pageEnv().t.verify);

/** The CSRF check of a form post failed (the form was not opened from this site in this browser). */
export function renderFormExpired(linkPath: string): string {
  const { t } = pageEnv();
  return renderMessagePage({
    title: t.verify.tryAgain,
    message: t.common.formExpired,
    alert: true,
    closing: t.verify.expiredHint(linkPath),
  });
}

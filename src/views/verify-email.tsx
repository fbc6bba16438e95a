import { pageEnv } from './env';
import { linkDonePage, linkInvalidPage, renderLinkQuestion, renderMessagePage } from './email-link-pages';

/** /verify-email with a live link: one button confirms the address (a POST, so mail scanners that pre-fetch links burn nothing). */
export function renderVerifyEmailForm(options: { email: string; token: string; csrf: string }): string {
  const { verify: says } = pageEnv().t;
  return renderLinkQuestion({
    title: says.title,
    intro: says.confirm(options.email),
    action: '/verify-email',
    button: says.submit,
    fields: { token: options.token, csrf: options.csrf },
  });
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

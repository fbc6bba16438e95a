import { pageEnv } from './env';
import { Hidden, NewPasswordFields, Submit } from './kit';
import { linkDonePage, linkInvalidPage } from './email-link-pages';
import { renderPage } from './layout';

/** /set-password with a live link: choose a password (twice), no JavaScript needed. */
export function renderSetPasswordForm(options: {
  email: string;
  token: string;
  csrf: string;
  minLength: number;
  error?: string;
  /** Shown above the form, e.g. why confirming an address asks for a password (CONTRACT §8). */
  intro?: string;
}): string {
  const { t } = pageEnv();
  return renderPage(
    { title: t.setPassword.title, errors: { password: options.error } },
    <>
      <h1>{t.setPassword.title}</h1>
      <p>
        {t.setPassword.account} <strong>{options.email}</strong>
      </p>
      {options.intro ? <p>{options.intro}</p> : null}
      <form method="post" action="/set-password">
        <Hidden fields={{ token: options.token, csrf: options.csrf }} />
        <input type="email" name="username" value={options.email} autocomplete="username" readonly hidden />
        <NewPasswordFields
          minLength={options.minLength}
          label={t.common.newPassword}
          repeatLabel={t.common.repeatNewPassword}
          error={options.error}
          errorId="form-error"
        />
        <Submit label={t.setPassword.submit} />
      </form>
    </>,
  );
}

export const renderSetPasswordDone = linkDonePage(() => pageEnv().t.setPassword);

export const renderSetPasswordInvalid = linkInvalidPage(() => pageEnv().t.setPassword);

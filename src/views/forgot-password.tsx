import { pageEnv } from './env';
import { AccountEmail, CsrfField, Submit } from './kit';
import { renderPage } from './layout';
import { renderMessagePage } from './email-link-pages';

/** /forgot-password: ask for a set-password link by email (beyond the spec, like POST /api/auth/forgot-password). */
export function renderForgotPasswordForm(options: { csrf: string; email?: string; error?: string }): string {
  const { t } = pageEnv();
  return renderPage(
    { title: t.forgot.title, errors: { email: options.error } },
    <>
      <h1>{t.forgot.title}</h1>
      <p>{t.forgot.intro}</p>
      <form method="post" action="/forgot-password" novalidate>
        <CsrfField csrf={options.csrf} />
        <AccountEmail value={options.email} error={options.error} errorId="form-error" />
        <Submit label={t.forgot.submit} />
      </form>
      <p class="muted">
        <a href="/login">{t.common.backToSignIn}</a>
      </p>
    </>,
  );
}

/** The same answer whether or not the address has an account (no account oracle). */
export function renderForgotPasswordSent(): string {
  const { t } = pageEnv();
  return renderMessagePage({ title: t.forgot.sentTitle, message: t.forgot.sent, closing: <a href="/login">{t.common.backToSignIn}</a> });
}

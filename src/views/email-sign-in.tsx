import { linkInvalidPage, renderLinkQuestion } from './email-link-pages';
import { pageEnv } from './env';
import { Hidden, ONE_TIME_CODE, PageField, Submit } from './kit';
import { renderPage } from './layout';
import { ContinueTo, type SignInApplication } from './login';

/**
 * After "Email me a sign-in link" (docs/passwords.md): where the 6-digit code of the mail is typed. It says the same for
 * every address (whether it has an account is never told).
 */
export function renderEmailCodePage(options: {
  csrf: string;
  email: string;
  returnTo?: string;
  error?: string;
  application?: SignInApplication;
}): string {
  const { t } = pageEnv();
  const again = `/login?${new URLSearchParams({ ...(options.returnTo ? { return_to: options.returnTo } : {}), login_hint: options.email })}`;
  return renderPage(
    { title: t.emailSignIn.codeTitle, errors: { code: options.error } },
    <>
      <h1>{t.emailSignIn.codeTitle}</h1>
      <ContinueTo application={options.application} />
      <p id="email-sent">{t.emailSignIn.codeIntro(options.email)}</p>
      <form method="post" action="/login/email/code" novalidate>
        <Hidden fields={{ csrf: options.csrf, return_to: options.returnTo ?? '', email: options.email }} />
        <PageField name="code" label={t.emailSignIn.code} {...ONE_TIME_CODE} required autofocus error={options.error} />
        <Submit label={t.emailSignIn.submit} />
      </form>
      <p class="muted">
        <a href={again}>{t.emailSignIn.sendAgain}</a>
      </p>
    </>,
  );
}

/** A sign-in link opened in a browser other than the one that asked for it: a question before anyone is signed in. */
export function renderEmailLinkConfirmPage(options: { csrf: string; token: string; email: string }): string {
  const { emailSignIn: says } = pageEnv().t;
  return renderLinkQuestion({
    title: says.confirmTitle,
    intro: says.confirmIntro(options.email),
    warning: says.confirmWarning,
    action: '/login/email/confirm',
    button: says.confirmButton,
    fields: { csrf: options.csrf, token: options.token },
  });
}

export const renderEmailLinkInvalid = linkInvalidPage(() => pageEnv().t.emailSignIn);

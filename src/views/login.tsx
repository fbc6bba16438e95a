import { PendingLinkNotice, ProviderButtons } from './federation';
import { pageEnv } from './env';
import { AccountEmail, Actions, CsrfField, Hidden, ONE_TIME_CODE, PageField, PasskeyError, Submit } from './kit';
import { renderPage } from './layout';
import { renderMessagePage } from './email-link-pages';

/**
 * "to continue to {application}" under the heading of an OAuth/OIDC sign-in (CONTRACT §15). A self-registered app's name
 * is whatever it chose: the page says no administrator reviewed it (CONTRACT §13, as consent and /device do), before the
 * password is typed.
 */
/**
 * The application a sign-in page continues to, as the page shows it: its name, and for a client that registered itself
 * (no administrator reviewed its name) the one thing about it that is not self-chosen, a metadata document's host.
 */
export interface SignInApplication {
  name: string;
  unreviewed?: { host?: string };
}

export function ContinueTo(props: { application?: SignInApplication }) {
  const { t } = pageEnv();
  const app = props.application;
  if (!app) return null;
  return (
    <>
      <p class="subtitle" id="continue-to">
        {t.login.continueTo(app.name)}
      </p>
      {app.unreviewed ? (
        <p class="error" id="unreviewed-app" role="note">
          <strong>{t.consent.unreviewedTitle}.</strong>{' '}
          {app.unreviewed.host ? t.login.unreviewedHost(app.unreviewed.host) : t.login.unreviewed}
        </p>
      ) : null}
    </>
  );
}

/**
 * The hosted sign-in form (CONTRACT §5): a plain form post, no JavaScript; "Continue with {name}" for each enabled
 * identity provider and, while an upstream identity waits to be linked, which account to prove (CONTRACT §16).
 */
export function renderLoginPage(options: {
  csrf: string;
  returnTo?: string;
  email?: string;
  error?: string;
  signedInAs?: string;
  providers?: ReadonlyArray<{ name: string; startUrl: string }>;
  pendingLink?: { email: string; providerName: string };
  application?: SignInApplication;
  /** REGISTRATION=open: link to /register, keeping where the person was going. */
  registerLink?: boolean;
  /** The setting email_sign_in: "Email me a sign-in link" posts the same form's email to /login/email. */
  emailSignIn?: boolean;
  /** What the error is about: the address (default) or the sign-in as a whole (an expired step, a passkey). */
  errorField?: 'email' | '_form';
}): string {
  const { t } = pageEnv();
  // A refused sign-in names the first field (which of the two was wrong is never told).
  const errorField = options.errorField ?? 'email';
  const fieldError = errorField === 'email' ? options.error : undefined;
  const hidden = <Hidden fields={{ csrf: options.csrf, return_to: options.returnTo ?? '' }} />;
  const registerHref = `/register${options.returnTo ? `?${new URLSearchParams({ return_to: options.returnTo })}` : ''}`;
  return renderPage(
    { title: t.login.title, scripts: PASSKEY_SCRIPTS, errors: options.error ? { [errorField]: options.error } : undefined },
    <>
      <h1>{t.login.title}</h1>
      <ContinueTo application={options.application} />
      {options.pendingLink ? <PendingLinkNotice link={options.pendingLink} /> : null}
      {options.signedInAs ? <p class="muted">{t.login.signedInAs(options.signedInAs)}</p> : null}
      <form method="post" action="/login" novalidate>
        {hidden}
        <AccountEmail value={options.email} error={fieldError} errorId="login-error" />
        <label for="password">{t.common.password}</label>
        <input type="password" id="password" name="password" autocomplete="current-password" required />
        <Actions>
          <button type="submit">{t.login.submit}</button>
          {options.emailSignIn ? (
            <button type="submit" class="secondary" formaction="/login/email" formnovalidate id="email-sign-in">
              {t.login.emailLink}
            </button>
          ) : null}
        </Actions>
      </form>
      <form method="post" action="/login/passkey" id="passkey-login-form">
        {hidden}
        <input type="hidden" name="response" value="" />
        <Actions>
          <button type="button" class="secondary" data-passkey-login="passkey-login-form" hidden>
            {t.login.passkey}
          </button>
        </Actions>
        <PasskeyError />
      </form>
      <ProviderButtons providers={options.providers ?? []} />
      <p class="muted">
        <a href="/forgot-password">{t.login.forgot}</a>
      </p>
      {options.registerLink ? (
        <p class="muted">
          {t.login.noAccount} <a href={registerHref}>{t.login.register}</a>
        </p>
      ) : null}
    </>,
  );
}

/** The WebAuthn ceremonies run in the browser: the library bundle and our small glue, both same-origin (CSP 'self'). */
export const PASSKEY_SCRIPTS = ['/static/simplewebauthn-browser.js', '/static/passkeys.js'];

/**
 * The second step of the hosted sign-in (CONTRACT §10): a code field, "Use a passkey" and "Use a recovery code",
 * all posting to /login/mfa with the mfa_token. Works without JavaScript except the passkey button.
 */
export function renderSecondStepPage(options: {
  csrf: string;
  returnTo?: string;
  mfaToken: string;
  methods: string[];
  error?: string;
  /** Which form the error is about: the code's (default when there is one), the recovery code's, or the passkey's. */
  errorField?: 'code' | 'recovery_code' | '_form';
  application?: SignInApplication;
}): string {
  const { t } = pageEnv();
  const hidden = <Hidden fields={{ csrf: options.csrf, return_to: options.returnTo ?? '', mfa_token: options.mfaToken }} />;
  const has = (m: string) => options.methods.includes(m);
  const errorField = options.errorField ?? (has('totp') ? 'code' : has('recovery_code') ? 'recovery_code' : '_form');
  return renderPage(
    {
      title: t.secondStep.title,
      scripts: has('passkey') ? PASSKEY_SCRIPTS : undefined,
      errors: options.error ? { [errorField]: options.error } : undefined,
    },
    <>
      <h1>{t.secondStep.title}</h1>
      <ContinueTo application={options.application} />
      <p>{t.secondStep.intro}</p>
      {has('totp') ? (
        <form method="post" action="/login/mfa" novalidate>
          {hidden}
          <PageField
            name="code"
            label={t.secondStep.code}
            {...ONE_TIME_CODE}
            required
            autofocus
            error={errorField === 'code' ? options.error : undefined}
            errorId="mfa-error"
          />
          <Submit label={t.secondStep.verify} />
        </form>
      ) : null}
      {has('passkey') ? (
        <form method="post" action="/login/mfa" id="passkey-mfa-form">
          {hidden}
          <input type="hidden" name="passkey" value="" />
          <Actions>
            <button type="button" class={has('totp') ? 'secondary' : undefined} data-passkey-mfa="passkey-mfa-form">
              {t.secondStep.passkey}
            </button>
          </Actions>
          <PasskeyError />
        </form>
      ) : null}
      {has('recovery_code') ? (
        <details open={!(has('totp') || has('passkey')) || errorField === 'recovery_code'}>
          <summary>{t.secondStep.useRecovery}</summary>
          <form method="post" action="/login/mfa" novalidate>
            {hidden}
            <PageField
              name="recovery_code"
              label={t.secondStep.recoveryCode}
              autocomplete="off"
              autocapitalize="none"
              spellcheck={false}
              required
              error={errorField === 'recovery_code' ? options.error : undefined}
              errorId="mfa-error"
            />
            <Actions>
              <button type="submit" class="secondary">
                {t.secondStep.submitRecovery}
              </button>
            </Actions>
          </form>
        </details>
      ) : null}
      <p class="muted">
        <a href={options.returnTo ? `/login?${new URLSearchParams({ return_to: options.returnTo })}` : '/login'}>
          {t.secondStep.startOver}
        </a>
      </p>
    </>,
  );
}

/** Where a sign-in without an allowed destination ends; also the way to sign out of the SSO session. */
export function renderSignedInPage(options: { email: string; csrf: string; consoleLink?: boolean }): string {
  const { t } = pageEnv();
  return renderPage(
    { title: t.signedIn.title },
    <>
      <h1>{t.signedIn.title}</h1>
      <p>
        {t.signedIn.as} <strong>{options.email}</strong>. {t.signedIn.closePage}
      </p>
      {options.consoleLink ? (
        <p>
          <a href="/admin">{t.signedIn.console}</a>
        </p>
      ) : null}
      <p>
        <a href="/account">{t.signedIn.manage}</a>: {t.signedIn.manageWhat}
      </p>
      <form method="post" action="/logout">
        <CsrfField csrf={options.csrf} />
        <Actions>
          <button type="submit" class="secondary">
            {t.signedIn.signOut}
          </button>
        </Actions>
      </form>
    </>,
  );
}

/** After signing out through the page. */
export function renderSignedOutPage(): string {
  const { t } = pageEnv();
  return renderMessagePage({
    title: t.signedOut.title,
    message: t.signedOut.body,
    closing: <a href="/login">{t.signedOut.again}</a>,
    plainClosing: true,
  });
}

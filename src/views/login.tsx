import { PendingLinkNotice, ProviderButtons } from './federation';
import { Actions, CsrfField, FormError, Hidden } from './kit';
import { renderPage } from './layout';

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
}): string {
  const describedBy = options.error ? 'login-error' : undefined;
  const hidden = <Hidden fields={{ csrf: options.csrf, return_to: options.returnTo ?? '' }} />;
  return renderPage(
    { title: 'Sign in', scripts: PASSKEY_SCRIPTS },
    <>
      <h1>Sign in</h1>
      {options.pendingLink ? <PendingLinkNotice link={options.pendingLink} /> : null}
      {options.signedInAs ? <p class="muted">You are signed in as {options.signedInAs}. Sign in again to use another account.</p> : null}
      <FormError id="login-error" message={options.error} />
      <form method="post" action="/login" novalidate>
        {hidden}
        <label for="email">Email address</label>
        <input
          type="email"
          id="email"
          name="email"
          autocomplete="username"
          required
          autofocus
          value={options.email ?? ''}
          aria-describedby={describedBy}
        />
        <label for="password">Password</label>
        <input type="password" id="password" name="password" autocomplete="current-password" required aria-describedby={describedBy} />
        <Actions>
          <button type="submit">Sign in</button>
        </Actions>
      </form>
      <form method="post" action="/login/passkey" id="passkey-login-form">
        {hidden}
        <input type="hidden" name="response" value="" />
        <Actions>
          <button type="button" class="secondary" data-passkey-login="passkey-login-form" hidden>
            Sign in with a passkey
          </button>
        </Actions>
        <p class="error" role="alert" data-passkey-error="" hidden></p>
      </form>
      <ProviderButtons providers={options.providers ?? []} />
      <p class="muted">
        <a href="/forgot-password">Forgot your password?</a>
      </p>
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
}): string {
  const hidden = <Hidden fields={{ csrf: options.csrf, return_to: options.returnTo ?? '', mfa_token: options.mfaToken }} />;
  const describedBy = options.error ? 'mfa-error' : undefined;
  const has = (m: string) => options.methods.includes(m);
  return renderPage(
    { title: 'Confirm it is you', scripts: has('passkey') ? PASSKEY_SCRIPTS : undefined },
    <>
      <h1>Confirm it is you</h1>
      <p>Your account is protected by a second factor.</p>
      <FormError id="mfa-error" message={options.error} />
      {has('totp') ? (
        <form method="post" action="/login/mfa" novalidate>
          {hidden}
          <label for="code">Code from your authenticator app</label>
          <input
            type="text"
            id="code"
            name="code"
            inputmode="numeric"
            pattern="[0-9]*"
            maxlength={6}
            autocomplete="one-time-code"
            required
            autofocus
            aria-describedby={describedBy}
          />
          <Actions>
            <button type="submit">Verify</button>
          </Actions>
        </form>
      ) : null}
      {has('passkey') ? (
        <form method="post" action="/login/mfa" id="passkey-mfa-form">
          {hidden}
          <input type="hidden" name="passkey" value="" />
          <Actions>
            <button type="button" class={has('totp') ? 'secondary' : undefined} data-passkey-mfa="passkey-mfa-form">
              Use a passkey
            </button>
          </Actions>
          <p class="error" role="alert" data-passkey-error="" hidden></p>
        </form>
      ) : null}
      {has('recovery_code') ? (
        <details open={!(has('totp') || has('passkey'))}>
          <summary>Use a recovery code</summary>
          <form method="post" action="/login/mfa" novalidate>
            {hidden}
            <label for="recovery_code">Recovery code</label>
            <input
              type="text"
              id="recovery_code"
              name="recovery_code"
              autocomplete="off"
              autocapitalize="none"
              spellcheck={false}
              required
            />
            <Actions>
              <button type="submit" class="secondary">
                Use recovery code
              </button>
            </Actions>
          </form>
        </details>
      ) : null}
      <p class="muted">
        <a href="/login">Start over</a>
      </p>
    </>,
  );
}

/** Where a sign-in without an allowed destination ends; also the way to sign out of the SSO session. */
export function renderSignedInPage(options: { email: string; csrf: string; consoleLink?: boolean }): string {
  return renderPage(
    { title: 'Signed in' },
    <>
      <h1>You are signed in</h1>
      <p>
        Signed in as <strong>{options.email}</strong>. You can close this page and return to the app you came from.
      </p>
      {options.consoleLink ? (
        <p>
          <a href="/admin">Open the administration console</a>
        </p>
      ) : null}
      <p>
        <a href="/account">Manage your account</a>: profile, password, sessions, connected apps, second factors and passkeys.
      </p>
      <form method="post" action="/logout">
        <CsrfField csrf={options.csrf} />
        <Actions>
          <button type="submit" class="secondary">
            Sign out
          </button>
        </Actions>
      </form>
    </>,
  );
}

/** After signing out through the page. */
export function renderSignedOutPage(): string {
  return renderPage(
    { title: 'Signed out' },
    <>
      <h1>You are signed out</h1>
      <p>This browser's single sign-on session has ended.</p>
      <p>
        <a href="/login">Sign in again</a>
      </p>
    </>,
  );
}

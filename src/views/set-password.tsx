import { Actions, FormError, Hidden, NewPasswordFields } from './kit';
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
  return renderPage(
    { title: 'Choose a password' },
    <>
      <h1>Choose a password</h1>
      <p>
        Account: <strong>{options.email}</strong>
      </p>
      {options.intro ? <p>{options.intro}</p> : null}
      <FormError id="form-error" message={options.error} />
      <form method="post" action="/set-password">
        <Hidden fields={{ token: options.token, csrf: options.csrf }} />
        <input type="email" name="username" value={options.email} autocomplete="username" readonly hidden />
        <NewPasswordFields
          minLength={options.minLength}
          label="New password"
          repeatLabel="Repeat the new password"
          describedBy={options.error ? 'form-error' : undefined}
        />
        <Actions>
          <button type="submit">Set password</button>
        </Actions>
      </form>
    </>,
  );
}

export function renderSetPasswordDone(): string {
  return renderPage(
    { title: 'Password set' },
    <>
      <h1>Password set</h1>
      <p>Your password is set and your email address is confirmed. Other devices have been signed out.</p>
      <p>
        <a href="/login">Continue to sign in</a>
      </p>
    </>,
  );
}

export function renderSetPasswordInvalid(): string {
  return renderPage(
    { title: 'Link not valid' },
    <>
      <h1>This link is not valid</h1>
      <p class="error" role="alert">
        The link is invalid, has expired or was already used.
      </p>
      <p class="muted">Ask for a new link from the sign-in page ("Forgot password") or from your administrator.</p>
    </>,
  );
}

import { Actions, Hidden } from './kit';
import { renderPage } from './layout';

/** /verify-email with a live link: one button confirms the address (a POST, so mail scanners that pre-fetch links burn nothing). */
export function renderVerifyEmailForm(options: { email: string; token: string; csrf: string }): string {
  return renderPage(
    { title: 'Confirm your email address' },
    <>
      <h1>Confirm your email address</h1>
      <p>
        Confirm that <strong>{options.email}</strong> is your email address.
      </p>
      <form method="post" action="/verify-email">
        <Hidden fields={{ token: options.token, csrf: options.csrf }} />
        <Actions>
          <button type="submit">Confirm my email address</button>
        </Actions>
      </form>
    </>,
  );
}

export function renderVerifyEmailDone(): string {
  return renderPage(
    { title: 'Email address confirmed' },
    <>
      <h1>Email address confirmed</h1>
      <p>Thank you, your email address is confirmed.</p>
      <p>
        <a href="/login">Continue to sign in</a>
      </p>
    </>,
  );
}

export function renderVerifyEmailInvalid(): string {
  return renderPage(
    { title: 'Link not valid' },
    <>
      <h1>This link is not valid</h1>
      <p class="error" role="alert">
        The link is invalid, has expired or was already used.
      </p>
      <p class="muted">Sign in and ask for a new confirmation email, or contact your administrator.</p>
    </>,
  );
}

/** The CSRF check of a form post failed (the form was not opened from this site in this browser). */
export function renderFormExpired(linkPath: string): string {
  return renderPage(
    { title: 'Form expired' },
    <>
      <h1>Please try again</h1>
      <p class="error" role="alert">
        This form has expired or was not sent from this site.
      </p>
      <p class="muted">
        Open the link from your email again (<code>{linkPath}</code>) and submit the form once more.
      </p>
    </>,
  );
}

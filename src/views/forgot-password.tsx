import { Actions, CsrfField, FormError } from './kit';
import { renderPage } from './layout';

/** /forgot-password: ask for a set-password link by email (beyond the spec, like POST /api/auth/forgot-password). */
export function renderForgotPasswordForm(options: { csrf: string; email?: string; error?: string }): string {
  return renderPage(
    { title: 'Reset your password' },
    <>
      <h1>Reset your password</h1>
      <p>Enter the email address of your account and we will send you a link to choose a new password.</p>
      <FormError id="form-error" message={options.error} />
      <form method="post" action="/forgot-password" novalidate>
        <CsrfField csrf={options.csrf} />
        <label for="email">Email address</label>
        <input
          type="email"
          id="email"
          name="email"
          autocomplete="username"
          required
          autofocus
          value={options.email ?? ''}
          aria-describedby={options.error ? 'form-error' : undefined}
        />
        <Actions>
          <button type="submit">Send the link</button>
        </Actions>
      </form>
      <p class="muted">
        <a href="/login">Back to sign in</a>
      </p>
    </>,
  );
}

/** The same answer whether or not the address has an account (no account oracle). */
export function renderForgotPasswordSent(): string {
  return renderPage(
    { title: 'Check your email' },
    <>
      <h1>Check your email</h1>
      <p>If an account exists for that address, a link to choose a new password is on its way. The link is valid for one hour.</p>
      <p class="muted">
        <a href="/login">Back to sign in</a>
      </p>
    </>,
  );
}

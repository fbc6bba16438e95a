import { escapeHtml, newPasswordFields, renderPage } from './layout';

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
  const error = options.error ? `<p class="error" role="alert" id="form-error">${escapeHtml(options.error)}</p>` : '';
  return renderPage({
    title: 'Choose a password',
    body: `<h1>Choose a password</h1>
<p>Account: <strong>${escapeHtml(options.email)}</strong></p>
${options.intro ? `<p>${escapeHtml(options.intro)}</p>` : ''}
${error}
<form method="post" action="/set-password">
  <input type="hidden" name="token" value="${escapeHtml(options.token)}">
  <input type="hidden" name="csrf" value="${escapeHtml(options.csrf)}">
  <input type="email" name="username" value="${escapeHtml(options.email)}" autocomplete="username" readonly hidden>
  ${newPasswordFields({ minLength: options.minLength, label: 'New password', repeatLabel: 'Repeat the new password', describedBy: options.error ? 'form-error' : undefined })}
  <div class="actions"><button type="submit">Set password</button></div>
</form>`,
  });
}

export function renderSetPasswordDone(): string {
  return renderPage({
    title: 'Password set',
    body: `<h1>Password set</h1>
<p>Your password is set and your email address is confirmed. Other devices have been signed out.</p>
<p><a href="/login">Continue to sign in</a></p>`,
  });
}

export function renderSetPasswordInvalid(): string {
  return renderPage({
    title: 'Link not valid',
    body: `<h1>This link is not valid</h1>
<p class="error" role="alert">The link is invalid, has expired or was already used.</p>
<p class="muted">Ask for a new link from the sign-in page ("Forgot password") or from your administrator.</p>`,
  });
}

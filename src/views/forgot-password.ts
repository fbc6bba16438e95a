import { escapeHtml, renderPage } from './layout';

/** /forgot-password: ask for a set-password link by email (beyond the spec, like POST /api/auth/forgot-password). */
export function renderForgotPasswordForm(options: { csrf: string; email?: string; error?: string }): string {
  const error = options.error ? `<p class="error" role="alert" id="form-error">${escapeHtml(options.error)}</p>` : '';
  const describedBy = options.error ? ' aria-describedby="form-error"' : '';
  return renderPage({
    title: 'Reset your password',
    body: `<h1>Reset your password</h1>
<p>Enter the email address of your account and we will send you a link to choose a new password.</p>
${error}
<form method="post" action="/forgot-password" novalidate>
  <input type="hidden" name="csrf" value="${escapeHtml(options.csrf)}">
  <label for="email">Email address</label>
  <input type="email" id="email" name="email" autocomplete="username" required autofocus value="${escapeHtml(options.email ?? '')}"${describedBy}>
  <div class="actions"><button type="submit">Send the link</button></div>
</form>
<p class="muted"><a href="/login">Back to sign in</a></p>`,
  });
}

/** The same answer whether or not the address has an account (no account oracle). */
export function renderForgotPasswordSent(): string {
  return renderPage({
    title: 'Check your email',
    body: `<h1>Check your email</h1>
<p>If an account exists for that address, a link to choose a new password is on its way. The link is valid for one hour.</p>
<p class="muted"><a href="/login">Back to sign in</a></p>`,
  });
}

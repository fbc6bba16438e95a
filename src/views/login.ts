import { escapeHtml, renderPage } from './layout';

/** The hosted sign-in form (CONTRACT §5): a plain form post, no JavaScript. */
export function renderLoginPage(options: { csrf: string; returnTo?: string; email?: string; error?: string; signedInAs?: string }): string {
  const error = options.error
    ? `<p class="error" role="alert" id="login-error">${escapeHtml(options.error)}</p>`
    : '';
  const signedIn = options.signedInAs
    ? `<p class="muted">You are signed in as ${escapeHtml(options.signedInAs)}. Sign in again to use another account.</p>`
    : '';
  const describedBy = options.error ? ' aria-describedby="login-error"' : '';
  return renderPage({
    title: 'Sign in',
    body: `<h1>Sign in</h1>
${signedIn}${error}
<form method="post" action="/login" novalidate>
  <input type="hidden" name="csrf" value="${escapeHtml(options.csrf)}">
  <input type="hidden" name="return_to" value="${escapeHtml(options.returnTo ?? '')}">
  <label for="email">Email address</label>
  <input type="email" id="email" name="email" autocomplete="username" required autofocus value="${escapeHtml(options.email ?? '')}"${describedBy}>
  <label for="password">Password</label>
  <input type="password" id="password" name="password" autocomplete="current-password" required${describedBy}>
  <div class="actions"><button type="submit">Sign in</button></div>
</form>
<p class="muted"><a href="/forgot-password">Forgot your password?</a></p>`,
  });
}

/** Where a sign-in without an allowed destination ends; also the way to sign out of the SSO session. */
export function renderSignedInPage(options: { email: string; csrf: string }): string {
  return renderPage({
    title: 'Signed in',
    body: `<h1>You are signed in</h1>
<p>Signed in as <strong>${escapeHtml(options.email)}</strong>. You can close this page and return to the app you came from.</p>
<form method="post" action="/logout">
  <input type="hidden" name="csrf" value="${escapeHtml(options.csrf)}">
  <div class="actions"><button type="submit" class="secondary">Sign out</button></div>
</form>`,
  });
}

/** After signing out through the page. */
export function renderSignedOutPage(): string {
  return renderPage({
    title: 'Signed out',
    body: `<h1>You are signed out</h1>
<p>This browser's single sign-on session has ended.</p>
<p><a href="/login">Sign in again</a></p>`,
  });
}

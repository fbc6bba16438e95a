import { renderPendingLinkNotice, renderProviderButtons } from './federation';
import { escapeHtml, renderPage } from './layout';

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
${options.pendingLink ? renderPendingLinkNotice(options.pendingLink) : ''}${signedIn}${error}
<form method="post" action="/login" novalidate>
  <input type="hidden" name="csrf" value="${escapeHtml(options.csrf)}">
  <input type="hidden" name="return_to" value="${escapeHtml(options.returnTo ?? '')}">
  <label for="email">Email address</label>
  <input type="email" id="email" name="email" autocomplete="username" required autofocus value="${escapeHtml(options.email ?? '')}"${describedBy}>
  <label for="password">Password</label>
  <input type="password" id="password" name="password" autocomplete="current-password" required${describedBy}>
  <div class="actions"><button type="submit">Sign in</button></div>
</form>
<form method="post" action="/login/passkey" id="passkey-login-form">
  <input type="hidden" name="csrf" value="${escapeHtml(options.csrf)}">
  <input type="hidden" name="return_to" value="${escapeHtml(options.returnTo ?? '')}">
  <input type="hidden" name="response" value="">
  <div class="actions"><button type="button" class="secondary" data-passkey-login="passkey-login-form" hidden>Sign in with a passkey</button></div>
  <p class="error" role="alert" data-passkey-error hidden></p>
</form>
${renderProviderButtons(options.providers ?? [])}
<p class="muted"><a href="/forgot-password">Forgot your password?</a></p>`,
    scripts: PASSKEY_SCRIPTS,
  });
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
  const hidden = `<input type="hidden" name="csrf" value="${escapeHtml(options.csrf)}">
  <input type="hidden" name="return_to" value="${escapeHtml(options.returnTo ?? '')}">
  <input type="hidden" name="mfa_token" value="${escapeHtml(options.mfaToken)}">`;
  const error = options.error ? `<p class="error" role="alert" id="mfa-error">${escapeHtml(options.error)}</p>` : '';
  const describedBy = options.error ? ' aria-describedby="mfa-error"' : '';
  const has = (m: string) => options.methods.includes(m);
  const totp = has('totp')
    ? `<form method="post" action="/login/mfa" novalidate>
  ${hidden}
  <label for="code">Code from your authenticator app</label>
  <input type="text" id="code" name="code" inputmode="numeric" pattern="[0-9]*" maxlength="6" autocomplete="one-time-code" required autofocus${describedBy}>
  <div class="actions"><button type="submit">Verify</button></div>
</form>`
    : '';
  const passkey = has('passkey')
    ? `<form method="post" action="/login/mfa" id="passkey-mfa-form">
  ${hidden}
  <input type="hidden" name="passkey" value="">
  <div class="actions"><button type="button"${has('totp') ? ' class="secondary"' : ''} data-passkey-mfa="passkey-mfa-form">Use a passkey</button></div>
  <p class="error" role="alert" data-passkey-error hidden></p>
</form>`
    : '';
  const recovery = has('recovery_code')
    ? `<details${has('totp') || has('passkey') ? '' : ' open'}>
<summary>Use a recovery code</summary>
<form method="post" action="/login/mfa" novalidate>
  ${hidden}
  <label for="recovery_code">Recovery code</label>
  <input type="text" id="recovery_code" name="recovery_code" autocomplete="off" autocapitalize="none" spellcheck="false" required>
  <div class="actions"><button type="submit" class="secondary">Use recovery code</button></div>
</form>
</details>`
    : '';
  return renderPage({
    title: 'Confirm it is you',
    body: `<h1>Confirm it is you</h1>
<p>Your account is protected by a second factor.</p>
${error}${totp}
${passkey}
${recovery}
<p class="muted"><a href="/login">Start over</a></p>`,
    scripts: has('passkey') ? PASSKEY_SCRIPTS : undefined,
  });
}

/** Where a sign-in without an allowed destination ends; also the way to sign out of the SSO session. */
export function renderSignedInPage(options: { email: string; csrf: string }): string {
  return renderPage({
    title: 'Signed in',
    body: `<h1>You are signed in</h1>
<p>Signed in as <strong>${escapeHtml(options.email)}</strong>. You can close this page and return to the app you came from.</p>
<p><a href="/account">Manage your account</a>: profile, password, sessions, connected apps, second factors and passkeys.</p>
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

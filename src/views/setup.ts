import { escapeHtml, newPasswordFields, renderPage } from './layout';

/** /setup with a live link: the first administrator's account, no JavaScript needed. */
export function renderSetupForm(options: {
  token: string;
  csrf: string;
  minLength: number;
  values?: { email?: string; first_name?: string; last_name?: string };
  error?: string;
}): string {
  const v = options.values ?? {};
  const error = options.error ? `<p class="error" role="alert" id="form-error">${escapeHtml(options.error)}</p>` : '';
  const describedBy = options.error ? ' aria-describedby="form-error"' : '';
  return renderPage({
    title: 'Set up service-sso',
    body: `<h1>Create the first administrator</h1>
<p class="muted">This account gets the super_admin role: it manages users, roles and OAuth clients. This link works once.</p>
${error}
<form method="post" action="/setup">
  <input type="hidden" name="token" value="${escapeHtml(options.token)}">
  <input type="hidden" name="csrf" value="${escapeHtml(options.csrf)}">
  <label for="email">Email</label>
  <input type="email" id="email" name="email" value="${escapeHtml(v.email)}" autocomplete="username" required${describedBy}>
  <label for="first_name">First name</label>
  <input type="text" id="first_name" name="first_name" value="${escapeHtml(v.first_name)}" autocomplete="given-name" required>
  <label for="last_name">Last name</label>
  <input type="text" id="last_name" name="last_name" value="${escapeHtml(v.last_name)}" autocomplete="family-name" required>
  ${newPasswordFields({ minLength: options.minLength, label: 'Password', repeatLabel: 'Repeat the password' })}
  <div class="actions"><button type="submit">Create administrator</button></div>
</form>`,
  });
}

export function renderSetupDone(): string {
  return renderPage({
    title: 'Administrator created',
    body: `<h1>Administrator created</h1>
<p>The first administrator account is ready and the setup link no longer works.</p>
<p><a href="/login">Continue to sign in</a></p>`,
  });
}

export function renderSetupInvalid(): string {
  return renderPage({
    title: 'Setup link not valid',
    body: `<h1>This setup link is not valid</h1>
<p class="error" role="alert">Setup is already complete, or the link is wrong.</p>
<p class="muted">While no administrator exists the server writes the setup link to its log at start. Once one exists, administrators are managed from the admin API or with <code>npm run admin</code> (server stopped, embedded database).</p>`,
  });
}

import { Actions, FormError, Hidden, NewPasswordFields } from './kit';
import { renderPage } from './layout';

/** /setup with a live link: the first administrator's account, no JavaScript needed. */
export function renderSetupForm(options: {
  token: string;
  csrf: string;
  minLength: number;
  values?: { email?: string; first_name?: string; last_name?: string };
  error?: string;
}): string {
  const v = options.values ?? {};
  return renderPage(
    { title: 'Set up service-sso' },
    <>
      <h1>Create the first administrator</h1>
      <p class="muted">This account gets the super_admin role: it manages users, roles and OAuth clients. This link works once.</p>
      <FormError id="form-error" message={options.error} />
      <form method="post" action="/setup">
        <Hidden fields={{ token: options.token, csrf: options.csrf }} />
        <label for="email">Email</label>
        <input
          type="email"
          id="email"
          name="email"
          value={v.email ?? ''}
          autocomplete="username"
          required
          aria-describedby={options.error ? 'form-error' : undefined}
        />
        <label for="first_name">First name</label>
        <input type="text" id="first_name" name="first_name" value={v.first_name ?? ''} autocomplete="given-name" required />
        <label for="last_name">Last name</label>
        <input type="text" id="last_name" name="last_name" value={v.last_name ?? ''} autocomplete="family-name" required />
        <NewPasswordFields minLength={options.minLength} label="Password" repeatLabel="Repeat the password" />
        <Actions>
          <button type="submit">Create administrator</button>
        </Actions>
      </form>
    </>,
  );
}

export function renderSetupDone(): string {
  return renderPage(
    { title: 'Administrator created' },
    <>
      <h1>Administrator created</h1>
      <p>The first administrator account is ready and the setup link no longer works.</p>
      <p>
        <a href="/login">Continue to sign in</a>
      </p>
    </>,
  );
}

export function renderSetupInvalid(): string {
  return renderPage(
    { title: 'Setup link not valid' },
    <>
      <h1>This setup link is not valid</h1>
      <p class="error" role="alert">
        Setup is already complete, or the link is wrong.
      </p>
      <p class="muted">
        While no administrator exists the server writes the setup link to its log at start. Once one exists, administrators are managed from
        the admin API or with <code>npm run admin</code> (server stopped, embedded database).
      </p>
    </>,
  );
}

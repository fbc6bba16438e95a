import { pageEnv } from './env';
import { Actions, FieldMessage, Hidden, invalidAttrs, NewPasswordFields } from './kit';
import { renderPage } from './layout';

/** /setup with a live link: the first administrator's account, no JavaScript needed. */
export function renderSetupForm(options: {
  token: string;
  csrf: string;
  minLength: number;
  values?: { email?: string; first_name?: string; last_name?: string };
  error?: string;
  /** The field the error is about (the address when not said). */
  errorField?: 'email' | 'first_name' | 'last_name' | 'password';
}): string {
  const v = options.values ?? {};
  const field = options.errorField ?? 'email';
  const errorOf = (f: typeof field) => (field === f ? options.error : undefined);
  const beside = (f: typeof field) => <FieldMessage id={`${f}-error`} message={errorOf(f)} />;
  const { t, brand } = pageEnv();
  return renderPage(
    { title: t.setup.title(brand.name), errors: { [field]: options.error } },
    <>
      <h1>{t.setup.heading}</h1>
      <p class="muted">{t.setup.intro}</p>
      <form method="post" action="/setup">
        <Hidden fields={{ token: options.token, csrf: options.csrf }} />
        {(
          [
            ['email', 'email', t.common.email, 'username'],
            ['first_name', 'text', t.common.firstName, 'given-name'],
            ['last_name', 'text', t.common.lastName, 'family-name'],
          ] as const
        ).map(([f, type, label, autocomplete]) => (
          <>
            <label for={f}>{label}</label>
            <input
              type={type}
              id={f}
              name={f}
              value={v[f] ?? ''}
              autocomplete={autocomplete}
              required
              {...invalidAttrs(errorOf(f), `${f}-error`)}
            />
            {beside(f)}
          </>
        ))}
        <NewPasswordFields
          minLength={options.minLength}
          label={t.common.password}
          repeatLabel={t.common.repeatPassword}
          describedBy={errorOf('password') ? 'password-error' : undefined}
          invalid={errorOf('password') !== undefined}
        />
        {beside('password')}
        <Actions>
          <button type="submit">{t.setup.submit}</button>
        </Actions>
      </form>
    </>,
  );
}

export function renderSetupDone(): string {
  const { t } = pageEnv();
  return renderPage(
    { title: t.setup.doneTitle },
    <>
      <h1>{t.setup.doneTitle}</h1>
      <p>{t.setup.done}</p>
      <p>
        <a href="/login">{t.common.continueToSignIn}</a>
      </p>
    </>,
  );
}

export function renderSetupInvalid(): string {
  const { t } = pageEnv();
  return renderPage(
    { title: t.setup.invalidTitle },
    <>
      <h1>{t.setup.invalidHeading}</h1>
      <p class="error" role="alert">
        {t.setup.invalid}
      </p>
      <p class="muted">
        {t.setup.invalidHintBefore} <code>npm run admin</code> {t.setup.invalidHintAfter}
      </p>
    </>,
  );
}

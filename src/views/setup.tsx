import { pageEnv } from './env';
import { Hidden, NewPasswordFields, PageField, Submit } from './kit';
import { renderPage } from './layout';
import { linkDonePage, renderMessagePage } from './email-link-pages';

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
          <PageField type={type} name={f} label={label} value={v[f] ?? ''} autocomplete={autocomplete} required error={errorOf(f)} />
        ))}
        <NewPasswordFields minLength={options.minLength} error={errorOf('password')} />
        <Submit label={t.setup.submit} />
      </form>
    </>,
  );
}

export const renderSetupDone = linkDonePage(() => pageEnv().t.setup);

export function renderSetupInvalid(): string {
  const { t } = pageEnv();
  return renderMessagePage({
    title: t.setup.invalidTitle,
    heading: t.setup.invalidHeading,
    message: t.setup.invalid,
    alert: true,
    closing: (
      <>
        {t.setup.invalidHintBefore} <code>npm run admin</code> {t.setup.invalidHintAfter}
      </>
    ),
  });
}

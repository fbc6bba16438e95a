import { pageEnv } from './env';
import { Hidden, NewPasswordFields, PageField, Submit } from './kit';
import { renderPage } from './layout';
import { ContinueTo, type SignInApplication } from './login';

export type RegisterField = 'first_name' | 'last_name' | 'email' | 'password';
const FIELDS: readonly RegisterField[] = ['first_name', 'last_name', 'email', 'password'];
const pick = (errors: Partial<Record<RegisterField | 'form', string>>) => Object.fromEntries(FIELDS.map((f) => [f, errors[f]]));

/** /register (CONTRACT §15): the form of POST /api/auth/register, with field errors each input points at. */
export function renderRegisterPage(options: {
  csrf: string;
  returnTo?: string;
  minLength: number;
  values?: { first_name?: string; last_name?: string; email?: string };
  errors?: Partial<Record<RegisterField | 'form', string>>;
  application?: SignInApplication;
}): string {
  const { t, brand } = pageEnv();
  const v = options.values ?? {};
  const errors = options.errors ?? {};
  const loginHref = `/login${options.returnTo ? `?${new URLSearchParams({ return_to: options.returnTo })}` : ''}`;
  return renderPage(
    {
      title: t.register.title,
      // The summary names the fields; a refusal of the whole form (an address taken) stands first.
      errors: { _form: errors.form && !FIELDS.some((f) => errors[f]) ? errors.form : undefined, ...pick(errors) },
    },
    <>
      <h1>{t.register.title}</h1>
      <ContinueTo application={options.application} />
      <p>{t.register.intro(brand.name)}</p>
      <form method="post" action="/register" novalidate>
        <Hidden fields={{ csrf: options.csrf, return_to: options.returnTo }} />
        {(
          [
            ['first_name', 'text', t.common.firstName, 'given-name', 100],
            ['last_name', 'text', t.common.lastName, 'family-name', 100],
            ['email', 'email', t.common.email, 'username', 254],
          ] as const
        ).map(([field, type, label, autocomplete, maxlength]) => (
          <PageField
            type={type}
            name={field}
            label={label}
            autocomplete={autocomplete}
            maxlength={maxlength}
            required
            value={v[field] ?? ''}
            error={errors[field]}
          />
        ))}
        <NewPasswordFields minLength={options.minLength} error={errors.password} />
        <Submit label={t.register.submit} />
      </form>
      <p class="muted">
        {t.register.haveAccount} <a href={loginHref}>{t.common.signIn}</a>
      </p>
    </>,
  );
}

/** After signing up: the account exists and is signed in; the address still needs confirming (CONTRACT §8). */
export function renderRegisteredPage(options: { email: string; continueTo?: string; application?: SignInApplication }): string {
  const { t } = pageEnv();
  return renderPage(
    { title: t.register.doneTitle },
    <>
      <h1>{t.register.doneTitle}</h1>
      <p role="status">{t.register.done(options.email)}</p>
      <p>{t.register.doneWhy}</p>
      <p class="muted">{t.register.doneNoMail}</p>
      <p>
        {options.continueTo ? (
          <a href={options.continueTo}>{options.application ? t.register.continueTo(options.application.name) : t.register.continueBack}</a>
        ) : (
          <a href="/account">{t.register.toAccount}</a>
        )}
      </p>
    </>,
  );
}

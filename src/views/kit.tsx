import type { ComponentChildren, InputHTMLAttributes } from 'preact';
import { pageEnv } from './env';

/**
 * Shared pieces of the server-rendered forms: the CSRF field, hidden fields, a form-level error that inputs point
 * at (aria-describedby), the row of buttons, dates, and the new-password pair. Values are props, escaped by the
 * renderer.
 */

export function CsrfField(props: { csrf: string }) {
  return <input type="hidden" name="csrf" value={props.csrf} />;
}

export function Hidden(props: { fields: Record<string, string | undefined> }) {
  return (
    <>
      {Object.entries(props.fields)
        .filter((entry): entry is [string, string] => entry[1] !== undefined)
        .map(([name, value]) => (
          <input type="hidden" name={name} value={value} />
        ))}
    </>
  );
}

/** A result announced to assistive technology (the flash message after a post-redirect-get, a notice). */
export function Flash(props: { message?: string; kind?: 'ok' | 'error' }) {
  if (!props.message) return null;
  return props.kind === 'error' ? (
    <p class="error" role="alert">
      {props.message}
    </p>
  ) : (
    <p class="ok" role="status">
      {props.message}
    </p>
  );
}

export function Actions(props: { class?: string; children?: ComponentChildren }) {
  return <div class={props.class ? `actions ${props.class}` : 'actions'}>{props.children}</div>;
}

/** A form's one action: its submit button in the actions row. */
export function Submit(props: { label: ComponentChildren }) {
  return (
    <Actions>
      <button type="submit">{props.label}</button>
    </Actions>
  );
}

/** A form whose one step is its button: its hidden fields (the CSRF token among them) posted to `action`. */
export function ButtonPost(props: {
  action: string;
  fields: Record<string, string | undefined>;
  label: ComponentChildren;
  children?: ComponentChildren;
}) {
  return (
    <form method="post" action={props.action}>
      <Hidden fields={props.fields} />
      {props.children}
      <Submit label={props.label} />
    </form>
  );
}

const timeFormats = new Map<string, Intl.DateTimeFormat>();

/** A UTC date and time in the page's language, by Intl.DateTimeFormat ("26 Nov 2026, 17:35 UTC", "26.11.2026, 17:35 UTC"). */
export function formatTime(at: Date, locale: string = pageEnv().locale): string {
  let format = timeFormats.get(locale);
  if (!format) {
    format = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC', hourCycle: 'h23' });
    timeFormats.set(locale, format);
  }
  return `${format.format(at)} UTC`;
}

/** A UTC time as the pages show it, in the page's language; the machine-readable value in `datetime`. */
/** A date, or an ISO timestamp of the API's answers. */
export function Time(props: { at: Date | string }) {
  const at = typeof props.at === 'string' ? new Date(props.at) : props.at;
  return <time dateTime={at.toISOString()}>{formatTime(at)}</time>;
}

/**
 * Where the passkey script (views/passkeys-script.ts) says what went wrong: its sentences ride on data- attributes,
 * so the static script speaks the page's language.
 */
export function PasskeyError() {
  const { t } = pageEnv();
  return (
    <p
      class="error"
      role="alert"
      data-passkey-error=""
      data-cancelled={t.passkeyScript.cancelled}
      data-failed={t.passkeyScript.failed}
      data-wrong-password={t.passkeyScript.wrongPassword}
      data-reauth={t.pageErrors.reauthOld}
      data-too-many={t.pageErrors.too_many_attempts}
      hidden
    ></p>
  );
}

/**
 * A new password typed twice (register, set-password, setup): labels ("Password", "Repeat password" unless given),
 * length hint, autocomplete for password managers, and the refusal below them (`errorId`, `password-error` unless given).
 */
export function NewPasswordFields(props: { minLength: number; label?: string; repeatLabel?: string; error?: Refusal; errorId?: string }) {
  const { t } = pageEnv();
  const errorId = props.errorId ?? 'password-error';
  const input = (name: string, refusal: { 'aria-describedby'?: string; 'aria-invalid'?: 'true' } = {}) => (
    <input type="password" id={name} name={name} autocomplete="new-password" minlength={props.minLength} required {...refusal} />
  );
  return (
    <>
      <label for="password">{props.label ?? t.common.password}</label>
      {input('password', { 'aria-describedby': props.error ? errorId : undefined, 'aria-invalid': props.error ? 'true' : undefined })}
      <p class="muted">{t.common.atLeastChars(props.minLength)}</p>
      <label for="password_confirm">{props.repeatLabel ?? t.common.repeatPassword}</label>
      {input('password_confirm')}
      <FieldMessage id={errorId} message={props.error} />
    </>
  );
}

/**
 * A refusal as the console shows it (CONTRACT §15): a sentence in the page's language, and on a page that is not in
 * English the API's own English reason (its `message`, CONTRACT §2) as a detail marked lang="en", because an
 * administrator needs the exact rule that refused.
 */
export type Refusal = string | { text: string; detail: string };

/** Field errors of a form, by field name (the zod issue paths of the API schema the form is checked with). */
export type FieldErrors = Record<string, Refusal | undefined>;

export function RefusalDetail(props: { detail: string }) {
  return (
    <span class="muted">
      ({pageEnv().t.console.common.detail} <span lang="en">{props.detail}</span>)
    </span>
  );
}

export function RefusalText(props: { value: Refusal }) {
  const v = props.value;
  return typeof v === 'string' ? (
    <>{v}</>
  ) : (
    <>
      {v.text} <RefusalDetail detail={v.detail} />
    </>
  );
}

/**
 * The summary of a refused form (CONTRACT §18): at the top of the page, focused when the page loads (autofocus; the
 * page's script focuses it too), a link to each field with its message; `_form` is a message about the whole form.
 */
export function ErrorSummary(props: { errors?: FieldErrors; idPrefix?: string }) {
  const entries = Object.entries(props.errors ?? {}).filter((e): e is [string, Refusal] => e[1] !== undefined);
  if (entries.length === 0) return null;
  const { t } = pageEnv();
  return (
    <div class="error-summary" id="error-summary" role="alert" aria-labelledby="error-summary-title" tabIndex={-1} autofocus>
      <h2 id="error-summary-title">{t.common.errorSummary}</h2>
      <ul>
        {entries.map(([field, message]) => (
          <li>
            {field === '_form' ? (
              <RefusalText value={message} />
            ) : (
              <a href={`#${props.idPrefix ?? 'f-'}${field}`}>{<RefusalText value={message} />}</a>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** A page title that says "Error" first when its form was refused. */
export const titleOf = (title: string, errors?: FieldErrors): string =>
  errors && Object.values(errors).some((e) => e !== undefined) ? `${pageEnv().t.common.error}: ${title}` : title;

/**
 * A page form's message beside its field (CONTRACT §18): the id its input names in aria-describedby; not an alert (the
 * summary at the top is the one alert of a refused form). Nothing when the field has no error.
 */
export function FieldMessage(props: { id: string; message?: Refusal }) {
  return props.message ? (
    <p class="field-error" id={props.id}>
      <RefusalText value={props.message} />
    </p>
  ) : null;
}

/** The attributes that tie a page input to its message beside it, when it has one. */
/** The attributes of a 6-digit one-time code input (an authenticator's or a mailed code): digits, autofill from SMS/mail. */
export const ONE_TIME_CODE = { inputmode: 'numeric', pattern: '[0-9]*', maxlength: 6, autocomplete: 'one-time-code' } as const;

export function invalidAttrs(message: Refusal | undefined, messageId: string): { 'aria-invalid'?: 'true'; 'aria-describedby'?: string } {
  return message ? { 'aria-invalid': 'true', 'aria-describedby': messageId } : {};
}

/**
 * A labelled input of a page form (its id is its name) with its refusal below it, tied together by aria-invalid and
 * aria-describedby; `errorId` (`<name>-error` unless given) may be shared by the inputs of one form.
 */
export function PageField({
  label,
  error,
  errorId,
  ...input
}: { name: string; label: string; error?: Refusal; errorId?: string } & InputHTMLAttributes) {
  const messageId = errorId ?? `${input.name}-error`;
  return (
    <>
      <label for={input.name}>{label}</label>
      <input type="text" id={input.name} {...input} {...invalidAttrs(error, messageId)} />
      <FieldMessage id={messageId} message={error} />
    </>
  );
}

/** The address of an account (sign-in, forgot-password): focused first, filled in by password managers. */
export function AccountEmail(props: { value?: string; error?: Refusal; errorId: string }) {
  return (
    <PageField
      type="email"
      name="email"
      label={pageEnv().t.common.email}
      autocomplete="username"
      required
      autofocus
      value={props.value ?? ''}
      error={props.error}
      errorId={props.errorId}
    />
  );
}

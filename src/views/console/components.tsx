import type { ComponentChildren, JSX } from 'preact';
import { pageEnv } from '../env';
import { Hidden, RefusalText, type FieldErrors } from '../kit';
import type { ListCount } from '../../declarations/list-count';

export { RefusalDetail, RefusalText, type FieldErrors, type Refusal } from '../kit';

/** A labelled input with its hint and error, tied together with aria-describedby / aria-invalid. */
/** What every labelled control has: its name and label, its value, hint and error, its id (`f-<name>` unless given). */
interface ControlProps {
  name: string;
  label: string;
  value?: string;
  id?: string;
  hint?: string;
  errors?: FieldErrors;
  required?: boolean;
}

/** A control's id, its error, and the aria-describedby tying its hint and error to it. */
function controlOf(props: ControlProps) {
  const id = props.id ?? `f-${props.name}`;
  const error = props.errors?.[props.name];
  return { id, error, describedBy: describedByOf(id, props.hint, error) };
}

export function Field(
  props: ControlProps & {
    type?: 'text' | 'email' | 'url' | 'search' | 'date' | 'number' | 'password';
    autocomplete?: string;
    /** Inputs of type number. */
    min?: number;
    max?: number;
  },
) {
  const { id, error, describedBy } = controlOf(props);
  return (
    <div>
      <label for={id}>{props.label}</label>
      <input
        type={props.type ?? 'text'}
        id={id}
        name={props.name}
        value={props.value ?? ''}
        required={props.required}
        autocomplete={props.autocomplete}
        min={props.min}
        max={props.max}
        aria-describedby={describedBy}
        aria-invalid={error ? 'true' : undefined}
      />
      <HintAndError id={id} hint={props.hint} error={error} />
    </div>
  );
}

export function TextArea(props: Omit<ControlProps, 'id' | 'required'>) {
  const { id, error, describedBy } = controlOf(props);
  return (
    <div>
      <label for={id}>{props.label}</label>
      <textarea id={id} name={props.name} aria-describedby={describedBy} aria-invalid={error ? 'true' : undefined}>
        {props.value ?? ''}
      </textarea>
      <HintAndError id={id} hint={props.hint} error={error} />
    </div>
  );
}

/** A group of checkboxes (scopes, permissions) in a fieldset with a legend. */
export function Checkboxes(props: {
  name: string;
  legend: string;
  options: Array<{ value: string; label?: string }>;
  checked: readonly string[];
  errors?: FieldErrors;
  hint?: string;
  /** Ids made of this prefix and the option's position (for values that are no valid id, such as `<uri> <scope>`). */
  idPrefix?: string;
}) {
  const error = props.errors?.[props.name];
  const describedBy = describedByOf(`f-${props.name}`, props.hint, error);
  const idOf = (value: string, i: number) => (props.idPrefix ? `${props.idPrefix}-${i}` : `f-${props.name}-${value}`);
  return (
    <fieldset aria-describedby={describedBy} id={`f-${props.name}`} tabIndex={-1}>
      <legend>{props.legend}</legend>
      <HintAndError id={`f-${props.name}`} hint={props.hint} />
      {props.options.map((o, i) => (
        <div class="check">
          <input
            type="checkbox"
            id={idOf(o.value, i)}
            name={props.name}
            value={o.value}
            checked={props.checked.includes(o.value)}
            aria-invalid={error ? 'true' : undefined}
          />
          <label for={idOf(o.value, i)}>{o.label ?? o.value}</label>
        </div>
      ))}
      <HintAndError id={`f-${props.name}`} error={error} />
    </fieldset>
  );
}

/** One checkbox that sends "true" when checked, with an optional hint. */
export function Checkbox(props: { name: string; label: string; checked: boolean; hint?: string }) {
  return <Check type="checkbox" id={`f-${props.name}`} value="true" {...props} />;
}

/** A checkbox or radio button in its `.check` row: its label, and its hint tied to it. */
function Check(props: {
  type: 'checkbox' | 'radio';
  id: string;
  name: string;
  value: string;
  checked: boolean;
  label: string;
  hint?: string;
}) {
  return (
    <div class="check">
      <input
        type={props.type}
        id={props.id}
        name={props.name}
        value={props.value}
        checked={props.checked}
        aria-describedby={props.hint ? `${props.id}-hint` : undefined}
      />
      <label for={props.id}>{props.label}</label>
      <HintAndError id={props.id} hint={props.hint} />
    </div>
  );
}

/** A choice of one among a few (radio buttons in a fieldset), each with an optional hint. */
export function Radios(props: {
  name: string;
  legend: string;
  value: string;
  options: Array<{ value: string; label: string; hint?: string }>;
  errors?: FieldErrors;
}) {
  const error = props.errors?.[props.name];
  return (
    <fieldset aria-describedby={error ? `f-${props.name}-error` : undefined}>
      <legend>{props.legend}</legend>
      {props.options.map((o) => (
        <Check type="radio" id={`f-${props.name}-${o.value}`} name={props.name} checked={props.value === o.value} {...o} />
      ))}
      <HintAndError id={`f-${props.name}`} error={error} />
    </fieldset>
  );
}

export function Select(
  props: ControlProps & {
    options: Array<{ value: string; label: string }>;
    /** A first, empty choice ("Choose a role…"): nothing is preselected. */
    placeholder?: string;
  },
) {
  const { id, error, describedBy } = controlOf(props);
  return (
    <div>
      <label for={id}>{props.label}</label>
      <select id={id} name={props.name} required={props.required} aria-describedby={describedBy} aria-invalid={error ? 'true' : undefined}>
        {props.placeholder !== undefined ? (
          <option value="" selected={!props.value}>
            {props.placeholder}
          </option>
        ) : null}
        {props.options.map((o) => (
          <option value={o.value} selected={o.value === props.value}>
            {o.label}
          </option>
        ))}
      </select>
      <HintAndError id={id} hint={props.hint} error={error} />
    </div>
  );
}

/** The keys of a form's values that hold text (what a Field, TextArea or Select shows). */
type TextKeys<V> = { [K in keyof V]-?: V[K] extends string | undefined ? K : never }[keyof V] & string;

/**
 * A form's controls bound to the values it was shown with and its refusals, by name: `<Field {...bound('issuer')}
 * label={…} />` names the control, shows the value it had and the error beside it.
 */
export function bindForm<V extends object>(values: V, errors: FieldErrors | undefined) {
  return (name: TextKeys<V>) => {
    const value: unknown = values[name];
    return { name, value: typeof value === 'string' ? value : undefined, errors };
  };
}

/** A CSRF-protected form post (post-redirect-get on the server). */
export function PostForm(props: {
  action: string;
  csrf: string;
  fields?: Record<string, string | undefined>;
  class?: string;
  children?: ComponentChildren;
}) {
  return (
    <form method="post" action={props.action} class={props.class}>
      <Hidden fields={{ csrf: props.csrf, ...props.fields }} />
      {props.children}
    </form>
  );
}

/** A list's filters: a search form (GET, so the URL keeps them) whose controls stand in a row before its button. */
export function FilterForm(props: { action: string; label: string; button: string; children?: ComponentChildren }) {
  return (
    <form method="get" action={props.action} class="filters" role="search" aria-label={props.label}>
      {props.children}
      <div>
        <button type="submit">{props.button}</button>
      </div>
    </form>
  );
}

/** A one-button action; destructive ones lead to a confirmation page first (the server asks unless `confirm=yes`). */
export function ActionButton(props: {
  action: string;
  csrf: string;
  label: string;
  danger?: boolean;
  ariaLabel?: string;
  fields?: Record<string, string>;
}) {
  return (
    <PostForm action={props.action} csrf={props.csrf} fields={props.fields} class="inline">
      <button type="submit" class={props.danger ? 'danger' : 'secondary'} aria-label={props.ariaLabel}>
        {props.label}
      </button>
    </PostForm>
  );
}

export interface Column<T> {
  label: string;
  cell: (row: T) => ComponentChildren;
  /** Long values (ids, URIs) may break anywhere. */
  wrap?: boolean;
}

/** A data table that collapses into labelled blocks below 40rem; the empty state says what to do next. */
export function Table<T>(props: { caption: string; columns: Array<Column<T>>; rows: readonly T[]; empty: ComponentChildren }) {
  if (props.rows.length === 0) return <p class="muted">{props.empty}</p>;
  return (
    <table class="collapse">
      <caption>{props.caption}</caption>
      <thead>
        <tr>
          {props.columns.map((c) => (
            <th scope="col">{c.label}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.rows.map((row) => (
          <tr>
            {props.columns.map((c) => (
              <td data-label={c.label} class={c.wrap ? 'wrap' : undefined}>
                {c.cell(row)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Previous / next links that keep the filters of the current page. */
export function Pagination(props: { prev?: string; next?: string; label?: string }) {
  if (!props.prev && !props.next) return null;
  return (
    <nav class="pager" aria-label={props.label ?? pageEnv().t.console.common.pages}>
      {props.prev ? <a href={props.prev}>{pageEnv().t.console.common.previousPage}</a> : null}
      {props.next ? <a href={props.next}>{pageEnv().t.console.common.nextPage}</a> : null}
    </nav>
  );
}

/**
 * How many rows a list holds (src/declarations/list-count.ts): "1,234 users", "More than 10,000 users match", "About
 * 100,000 users" (the table's estimate, never a full count).
 */
export function CountLine(props: { count: ListCount; what: 'users' | 'events'; filtered: boolean }) {
  const { kind, value } = props.count;
  const { locale, t } = pageEnv();
  // The number in the page's language (Intl.NumberFormat), the noun by Intl.PluralRules (the catalogue's countLine).
  const text = t.console.countLine(props.what, value, value.toLocaleString(locale), kind, props.filtered);
  return (
    <p class="muted list-count" data-count-kind={kind}>
      {text}
    </p>
  );
}

export function Badge(props: { on: boolean; yes: string; no: string }) {
  return <span class={props.on ? 'badge' : 'badge off'}>{props.on ? props.yes : props.no}</span>;
}

/** A value with a copy button (progressive enhancement: /static/console.js; without JavaScript the text is selectable). */
export function CopyValue(props: { id: string; label: string; value: string }) {
  const c = pageEnv().t.console.common;
  return (
    <div class="copy-row">
      <code id={props.id}>{props.value}</code>
      <button
        type="button"
        class="secondary"
        data-copy={props.id}
        data-copied={c.copied}
        data-copy-failed={c.copyFailed}
        hidden
        aria-label={c.copyNamed(props.label)}
      >
        {c.copy}
      </button>
    </div>
  );
}

export function Facts(props: { items: Array<[string, ComponentChildren]> }) {
  return (
    <dl class="facts">
      {props.items.map(([term, value]) => (
        <>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </>
      ))}
    </dl>
  );
}

export type Children = JSX.Element | ComponentChildren;

/** The ids a control's aria-describedby names: its hint's and its refusal's, when it has them. */
function describedByOf(id: string, hint: string | undefined, error: FieldErrors[string]): string | undefined {
  return [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
}

/** A control's hint and its refusal, below it, with the ids describedByOf names. */
function HintAndError(props: { id: string; hint?: string; error?: FieldErrors[string] }) {
  return (
    <>
      {props.hint ? (
        <p class="hint" id={`${props.id}-hint`}>
          {props.hint}
        </p>
      ) : null}
      {props.error ? (
        <p class="field-error" id={`${props.id}-error`}>
          <RefusalText value={props.error} />
        </p>
      ) : null}
    </>
  );
}

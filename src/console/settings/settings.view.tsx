import { SETTINGS, type SettingDecl, type SettingEntry } from '../../declarations/settings';
import { pageEnv } from '../../views/env';
import { RefusalText, Submit } from '../../views/kit';
import { Field, PostForm, Table, type FieldErrors } from '../../views/console/components';
import { renderConsole, type ConsoleFrame } from '../../views/console/layout';
import { choicesOf, controlOf, formTextOf } from './settings.form';

/** The Settings page (docs/settings.md): the runtime settings as one form, the test mail, the start-up configuration. */
export interface SettingsPageData {
  settings: SettingEntry[];
  /** The form as entered, after a refusal (never a secret). */
  values?: Record<string, string>;
  errors: FieldErrors;
  /** Holds system:manage_settings: may change the sensitive settings and send a test mail. */
  mayChangeSensitive: boolean;
  /** The environment-only configuration (masked). */
  environment: Array<[string, string]>;
}

const x = () => pageEnv().t.console.settings;

function SettingField(props: { d: SettingDecl; entry: SettingEntry; locked: string | undefined; value: string; errors: FieldErrors }) {
  const { d, entry, locked } = props;
  const [label, hint] = x().labels[d.name] ?? [d.name, ''];
  const id = `f-${d.name}`;
  const error = props.errors[d.name];
  const notes = [hint, locked, d.secret ? (entry.set ? x().secretSet : x().secretNotSet) : undefined].filter(Boolean).join(' ');
  const describedBy = [`${id}-hint`, error ? `${id}-error` : ''].filter(Boolean).join(' ');
  const common = {
    id,
    name: d.name,
    disabled: locked !== undefined,
    'aria-describedby': describedBy,
    'aria-invalid': error ? ('true' as const) : undefined,
  };
  const control = controlOf(d);
  const choices = choicesOf(d);
  return (
    <div class="setting">
      <label for={id}>
        {label} <code class="env-var">{entry.env_var}</code>
      </label>
      {control === 'select' && choices ? (
        <select {...common}>
          {choices.map((choice) => (
            <option value={choice} selected={choice === props.value}>
              {choice === 'true' ? x().yes : choice === 'false' ? x().no : choice}
            </option>
          ))}
        </select>
      ) : control === 'lines' || control === 'json' ? (
        <textarea {...common} rows={control === 'json' ? 3 : 4}>
          {props.value}
        </textarea>
      ) : (
        <input
          {...common}
          type={control === 'number' ? 'number' : control === 'secret' ? 'password' : 'text'}
          value={control === 'secret' ? '' : props.value}
          autocomplete={control === 'secret' ? 'new-password' : 'off'}
        />
      )}
      <p class="hint" id={`${id}-hint`}>
        {notes} <span class="source">({x().source(entry.source)})</span>
      </p>
      {d.secret && entry.set && locked === undefined ? (
        <div class="check">
          <input type="checkbox" id={`f-clear_${d.name}`} name={`clear_${d.name}`} value="true" />
          <label for={`f-clear_${d.name}`}>{x().clearSecret}</label>
        </div>
      ) : null}
      {error ? (
        <p class="field-error" id={`${id}-error`}>
          <RefusalText value={error} />
        </p>
      ) : null}
    </div>
  );
}

export function renderSettingsPage(frame: ConsoleFrame, data: SettingsPageData): string {
  const st = x();
  const byName = new Map(data.settings.map((e) => [e.name, e]));
  const lockOf = (d: SettingDecl, entry: SettingEntry) =>
    entry.read_only ? st.pinned(entry.env_var) : d.sensitive && !data.mayChangeSensitive ? st.needsPermission : undefined;
  // The declared settings the answer lists, in declaration order, each with its entry.
  const shown = SETTINGS.flatMap((d) => {
    const entry = byName.get(d.name);
    return entry ? [{ d, entry }] : [];
  });
  const editable = shown.filter(({ d, entry }) => lockOf(d, entry) === undefined).map(({ d }) => d.name);
  const groups = [...new Set(shown.map(({ d }) => d.group))];
  const was = Object.fromEntries(shown.map(({ d, entry }) => [`was_${d.name}`, formTextOf(d, entry.value)]));
  return renderConsole(
    frame,
    <>
      <h1>{st.title}</h1>
      <p>{st.formIntro}</p>
      <PostForm action="/admin/settings" csrf={frame.csrf} fields={{ ...was, editable: editable.join(',') }} class="settings-form">
        {groups.map((group) => (
          <fieldset>
            <legend>{st.groups[group] ?? group}</legend>
            {shown
              .filter(({ d }) => d.group === group)
              .map(({ d, entry }) => {
                const value = d.secret ? '' : (data.values?.[d.name] ?? formTextOf(d, entry.value));
                return <SettingField d={d} entry={entry} locked={lockOf(d, entry)} value={value} errors={data.errors} />;
              })}
          </fieldset>
        ))}
        <Submit label={st.save} />
      </PostForm>
      {data.mayChangeSensitive ? (
        <section aria-labelledby="test-mail-title">
          <h2 id="test-mail-title">{st.testMailTitle}</h2>
          <PostForm action="/admin/settings/test-mail" csrf={frame.csrf}>
            <Field
              name="to"
              type="email"
              label={st.testMailTo}
              value={data.values?.to ?? ''}
              errors={data.errors}
              required
              autocomplete="email"
            />
            <Submit label={st.testMailSend} />
          </PostForm>
        </section>
      ) : null}
      <section aria-labelledby="environment-title">
        <h2 id="environment-title">{st.envTitle}</h2>
        <p>{st.envIntro}</p>
        <Table
          caption={st.caption}
          rows={data.environment}
          empty={st.empty}
          columns={[
            { label: st.setting, cell: ([k]) => <code>{k}</code> },
            { label: st.value, wrap: true, cell: ([, v]) => <code>{v}</code> },
          ]}
        />
      </section>
    </>,
  );
}

import type { ComponentChildren } from 'preact';
import type { ApiResource, OAuthClient } from '../../wire/admin/admin.schemas';
import { CLIENT_PRESETS, presetOf, PRESETS, quickStartSnippet, type ClientPreset } from '../../declarations/client-presets';
import { pageEnv } from '../env';
import { CopyValue, Facts } from './components';
import { renderConsole, type ConsoleFrame } from './layout';

/**
 * Creating an application starts from what it is (docs/apps.md): the choice of a preset, and the quick-start shown
 * after creation and on the application's page (the settings to copy and the matching guide's code, filled in).
 */

const s = () => pageEnv().t.console.start;

export const presetName = (preset: ClientPreset) => s().presets[preset].name;

/** The first step of "Create an application": what it is. */
export function renderPresetChooser(frame: ConsoleFrame): string {
  const st = s();
  return renderConsole(
    frame,
    <>
      <p>
        <a href="/admin/applications">{pageEnv().t.console.applications.back}</a>
      </p>
      <h1>{st.chooseTitle}</h1>
      <p>{st.chooseIntro}</p>
      <ul class="choices">
        {CLIENT_PRESETS.map((p) => (
          <li>
            <a href={`/admin/applications/new?preset=${p}`}>{st.presets[p].name}</a>
            <span class="hint">{st.presets[p].text}</span>
          </li>
        ))}
        <li>
          <a href="/admin/applications/new?preset=custom">{st.custom}</a>
          <span class="hint">{st.customText}</span>
        </li>
      </ul>
    </>,
  );
}

/** What the quick-start is drawn from: the application and the APIs as the admin API answers them, and the issuer. */
export interface QuickStartData {
  client: OAuthClient;
  /** The registered APIs (GET /api/admin/api-resources): the first one the application may call fills in the code. */
  resources: readonly ApiResource[];
  issuer: string;
  /** The secret, in the answer to the create (or rotate) post only. */
  secret?: string;
}

/** What the application is (its preset), and the matching guide's code with its settings filled in. */
function quickStartOf({ client, resources, issuer }: QuickStartData) {
  const preset = presetOf({ type: client.type, grantTypes: client.grant_types, redirectUris: client.redirect_uris });
  const resource = client.allowed_resources[0];
  const resourceScope = resource ? resources.find((r) => r.identifier === resource)?.scopes[0] : undefined;
  const filled = { issuer, clientId: client.client_id, redirectUri: client.redirect_uris[0], resource, resourceScope };
  return { preset, discoveryUrl: `${issuer}/.well-known/openid-configuration`, snippet: quickStartSnippet(preset, filled) };
}

/** The settings to configure and the guide's code with them filled in. */
export function QuickStart(props: QuickStartData & { heading: 'h1' | 'h2' }) {
  const st = s();
  const ap = pageEnv().t.console.applications;
  const c = props.client;
  const { preset, discoveryUrl, snippet } = quickStartOf(props);
  const settings: Array<[string, ComponentChildren]> = [
    [st.presetLabel, presetName(preset)],
    [ap.issuer, <CopyValue id="issuer" label={ap.issuerLower} value={props.issuer} />],
    [ap.discoveryUrl, <CopyValue id="discovery" label={ap.discoveryUrlLower} value={discoveryUrl} />],
    [ap.clientId, <CopyValue id="client-id" label={ap.clientIdLower} value={c.client_id} />],
  ];
  if (props.secret) settings.push([ap.clientSecret, <CopyValue id="client-secret" label={ap.clientSecretLower} value={props.secret} />]);
  if (c.redirect_uris[0])
    settings.push([ap.redirectUri, <CopyValue id="redirect-uri" label={ap.redirectUriLower} value={c.redirect_uris[0]} />]);
  settings.push([ap.scopes, c.scopes.join(' ')]);
  if (c.type === 'public') settings.push([ap.tokenAuth, ap.tokenAuthNone]);
  const Heading = props.heading;
  const guide = PRESETS[preset].guide;
  const usesSecret = c.type === 'confidential' && c.token_endpoint_auth_method !== 'private_key_jwt';
  return (
    <section aria-labelledby="quick-start-h">
      <Heading id="quick-start-h">{props.heading === 'h1' ? st.quickStartTitle(c.name) : st.quickStart}</Heading>
      <p>{st.quickStartIntro(presetName(preset))}</p>
      <Facts items={settings} />
      {usesSecret ? (
        <p class="hint">{props.secret ? st.secretFromEnvironment : `${st.secretFromEnvironment} ${st.secretNotShown}`}</p>
      ) : null}
      <div class="snippet">
        <pre class="settings" tabIndex={0} aria-label={st.codeLabel}>
          <code id="quick-start-code" class={`language-${snippet.language}`}>
            {snippet.code}
          </code>
        </pre>
        <button
          type="button"
          class="secondary"
          data-copy="quick-start-code"
          data-copied={pageEnv().t.console.common.copied}
          data-copy-failed={pageEnv().t.console.common.copyFailed}
          hidden
          aria-label={pageEnv().t.console.common.copyNamed(st.codeLabel)}
        >
          {pageEnv().t.console.common.copy}
        </button>
      </div>
      <p>
        {st.guideLine} <code>{guide}</code> <span class="muted">({st.guideNote})</span>
      </p>
    </section>
  );
}

/** The quick-start of an existing application (linked from its page). */
export function renderQuickStart(frame: ConsoleFrame, data: QuickStartData): string {
  return renderConsole(
    frame,
    <>
      <p>
        <a href={`/admin/applications/${encodeURIComponent(data.client.client_id)}`}>{s().back}</a>
      </p>
      <QuickStart {...data} heading="h1" />
    </>,
  );
}

/** The Overview's checklist while there are no applications. */
export function GetStarted(props: { people: boolean }) {
  const st = s();
  const steps: Array<{ href: string; title: string; text: string; done?: boolean }> = [
    { href: '/admin/applications/new', title: st.stepApplication, text: st.stepApplicationText },
    { href: '/admin/settings', title: st.stepSettings, text: st.stepSettingsText },
    { href: '/admin/users/new', title: st.stepPeople, text: st.stepPeopleText, done: props.people },
    { href: '/account', title: st.stepFactor, text: st.stepFactorText },
  ];
  return (
    <section aria-labelledby="get-started-h" class="get-started">
      <h2 id="get-started-h">{st.checklistHeading}</h2>
      <p>{st.checklistIntro}</p>
      <ol class="choices">
        {steps.map((step) => (
          <li>
            <a href={step.href}>{step.title}</a> <span class="hint">{step.text}</span>
            {step.done ? <span class="badge"> {st.done}</span> : null}
          </li>
        ))}
      </ol>
    </section>
  );
}

import { pageEnv } from './env';
import { Actions, Hidden } from './kit';
import { renderPage } from './layout';

/** CONTRACT §23: consent names each API (RFC 8707 resource) the tokens would be for, by name and identifier. */
function ApiResources(props: { resources: ReadonlyArray<{ identifier: string; name: string }> }) {
  const { t } = pageEnv();
  if (props.resources.length === 0) return null;
  return (
    <>
      <p id="resources-heading">{t.consent.resources}</p>
      <ul class="scopes" id="api-resources" aria-labelledby="resources-heading">
        {props.resources.map((r) => (
          <li>
            <strong>{r.name}</strong> <code class="muted">{r.identifier}</code>
          </li>
        ))}
      </ul>
    </>
  );
}

/**
 * What an app asks for (consent, device): a warning when no administrator reviewed it, what it will be able to do in
 * plain words, and the APIs (RFC 8707 resources) its tokens would be for.
 */
export function Requested(props: {
  unreviewed?: string;
  willBeAble: string;
  scopes: ReadonlyArray<{ description: string }>;
  resources: ReadonlyArray<{ identifier: string; name: string }>;
}) {
  return (
    <>
      {props.unreviewed !== undefined ? (
        <section class="error" id="unreviewed-app" aria-labelledby="unreviewed-title">
          <h2 id="unreviewed-title">{pageEnv().t.consent.unreviewedTitle}</h2>
          <p>{props.unreviewed}</p>
        </section>
      ) : null}
      <p id="scopes-heading">{props.willBeAble}</p>
      <ul class="scopes" aria-labelledby="scopes-heading">
        {props.scopes.map((s) => (
          <li>{s.description}</li>
        ))}
      </ul>
      <ApiResources resources={props.resources} />
    </>
  );
}

/** The consent screen (spec §4.3): who asks, for what, in plain words; Approve and Deny are plain form posts. */
export function renderConsentPage(options: {
  csrf: string;
  requestId: string;
  clientName: string;
  /** CONTRACT §13: for a Client ID Metadata Document client, the host of its URL (shown with a warning). */
  clientHost?: string;
  scopes: Array<{ scope: string; description: string }>;
  /** CONTRACT §23: the APIs asked for (empty for a sign-in). */
  resources: ReadonlyArray<{ identifier: string; name: string }>;
  userEmail: string;
  uiLocales?: string;
  /**
   * CONTRACT §13: a dynamically registered client, which no administrator reviewed: its name is self-chosen, so the
   * page says so and names the host the browser goes back to.
   */
  unreviewed?: { redirectHost: string };
}): string {
  const { t } = pageEnv();
  return renderPage(
    { title: t.consent.title(options.clientName) },
    <>
      <h1 id="client-name">{t.consent.heading(options.clientName)}</h1>
      {options.clientHost !== undefined && (
        <div id="client-origin" role="note">
          <p>
            <strong>{t.consent.metadataDocumentHost(options.clientHost)}</strong>
          </p>
          <p class="muted">{t.consent.metadataDocumentUnreviewed}</p>
        </div>
      )}
      <p class="muted">{t.consent.signedInAs(options.userEmail)}</p>
      <Requested
        unreviewed={options.unreviewed ? t.consent.unreviewed(options.unreviewed.redirectHost) : undefined}
        willBeAble={t.consent.willBeAble}
        scopes={options.scopes}
        resources={options.resources}
      />
      <form method="post" action="/consent">
        <Hidden fields={{ csrf: options.csrf, request_id: options.requestId, ui_locales: options.uiLocales }} />
        <Actions>
          <button type="submit" name="decision" value="approve">
            {t.consent.approve}
          </button>{' '}
          <button type="submit" name="decision" value="deny" class="secondary">
            {t.consent.deny}
          </button>
        </Actions>
      </form>
      <p class="muted">
        {t.consent.revokeBefore} <a href="/account#apps">{t.consent.revokeLink}</a>.
      </p>
    </>,
  );
}

/**
 * A small error page for the browser flow (bad authorize link, expired request, refused form). `detail` is a technical
 * description meant for an app's developers (an OAuth error_description, English by contract): shown marked as English.
 */
export function renderOAuthErrorPage(options: { title: string; message: string; detail?: string }): string {
  const { t, locale } = pageEnv();
  return renderPage(
    { title: options.title },
    <>
      <h1>{options.title}</h1>
      <p role="alert">{options.message}</p>
      {options.detail ? (
        <p class="muted">
          {t.oauthPages.detail} <code lang={locale === 'en' ? undefined : 'en'}>{options.detail}</code>
        </p>
      ) : null}
      <p class="muted">{t.common.goBack}</p>
    </>,
  );
}

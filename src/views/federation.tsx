import { pageEnv } from './env';
import { Actions, FieldMessage, Hidden } from './kit';
import { renderPage } from './layout';

/**
 * The sign-in page's "Continue with {name}" links (CONTRACT §16): plain links to the start endpoint, so they work
 * without JavaScript. No logo is hot-linked from a provider.
 */
export function ProviderButtons(props: { providers: ReadonlyArray<{ name: string; startUrl: string }> }) {
  if (props.providers.length === 0) return null;
  const { t } = pageEnv();
  return (
    <nav aria-label={t.federation.otherWays} class="providers">
      <ul>
        {props.providers.map((p) => (
          <li>
            <a class="button secondary" href={p.startUrl}>
              {t.federation.continueWith(p.name)}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/** Shown on /login while an upstream identity waits for the person to prove the account it will be linked to. */
export function PendingLinkNotice(props: { link: { email: string; providerName: string } }) {
  const { email, providerName } = props.link;
  return (
    <p class="ok" role="status">
      {pageEnv().t.federation.pendingLink(providerName, email)}
    </p>
  );
}

/** The /account section listing linked identities, with Unlink, and links to connect the other enabled providers. */
export function IdentitiesSection(props: {
  csrf: string;
  /** `confirmSlug`: the identity was flagged at the upgrade; a round trip with that provider confirms it. */
  identities: ReadonlyArray<{ id: string; providerName: string; email: string | null; createdAt: Date; confirmSlug?: string }>;
  available: ReadonlyArray<{ name: string; slug: string }>;
  error?: string;
  formQuery?: string;
}) {
  const q = props.formQuery ?? '';
  const { t } = pageEnv();
  return (
    <section aria-labelledby="identities-h" id="identities">
      <h2 id="identities-h">{t.federation.linkedSignIns}</h2>
      <FieldMessage id="identities-error" message={props.error} />
      {props.identities.length ? (
        <ul>
          {props.identities.map((i) => (
            <li>
              <strong>{i.providerName}</strong>
              {i.email ? <span class="muted"> ({i.email})</span> : null}{' '}
              {i.confirmSlug ? (
                <>
                  <p class="error">{t.federation.needsConfirmation(i.providerName)}</p>
                  <form method="post" action={`/account/identities/link${q}`} class="inline">
                    <Hidden fields={{ csrf: props.csrf, slug: i.confirmSlug }} />
                    <button type="submit">{t.federation.confirmWith(i.providerName)}</button>
                  </form>{' '}
                </>
              ) : null}
              <form method="post" action={`/account/identities/remove${q}`} class="inline">
                <Hidden fields={{ csrf: props.csrf, identity_id: i.id }} />
                <button type="submit" class="secondary" aria-label={t.federation.unlinkNamed(i.providerName)}>
                  {t.federation.unlink}
                </button>
              </form>
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">{t.federation.noneLinked}</p>
      )}
      {/* A post with the CSRF field: linking adds a way to sign in, so another site must not be able to start it. */}
      {props.available.length ? (
        <Actions>
          {props.available.map((a) => (
            <form method="post" action={`/account/identities/link${q}`} class="inline">
              <Hidden fields={{ csrf: props.csrf, slug: a.slug }} />
              <button type="submit" class="secondary">
                {t.federation.link(a.name)}
              </button>
            </form>
          ))}
        </Actions>
      ) : null}
    </section>
  );
}

/**
 * The confirmation of a pending link after signing in (issue 30): it names the provider and the upstream account,
 * and only its "Link" button (a CSRF-protected post) links it; "Don't link" discards it.
 */
export function renderLinkConfirmPage(options: {
  csrf: string;
  returnTo?: string;
  link: { providerName: string; email?: string; subject: string };
}): string {
  const { t } = pageEnv();
  const { providerName, email, subject } = options.link;
  const c = t.federation.confirmLink;
  return renderPage(
    { title: c.title(providerName) },
    <>
      <h1>{c.title(providerName)}</h1>
      <p>
        <strong>{c.question(providerName, email ?? subject)}</strong>
      </p>
      <p class="muted">{c.subject(subject)}</p>
      <p>{c.warning(providerName)}</p>
      <form method="post" action="/login/link">
        <Hidden fields={{ csrf: options.csrf, return_to: options.returnTo }} />
        <Actions>
          <button type="submit" name="decision" value="link">
            {c.link}
          </button>
          <button type="submit" name="decision" value="cancel" class="secondary">
            {c.cancel}
          </button>
        </Actions>
      </form>
    </>,
  );
}

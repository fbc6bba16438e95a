import { escapeHtml } from './layout';

/**
 * The sign-in page's "Continue with {name}" links (CONTRACT §16): plain links to the start endpoint, so they work
 * without JavaScript. No logo is hot-linked from a provider.
 */
export function renderProviderButtons(providers: ReadonlyArray<{ name: string; startUrl: string }>): string {
  if (providers.length === 0) return '';
  const links = providers
    .map((p) => `<li><a class="button secondary" href="${escapeHtml(p.startUrl)}">Continue with ${escapeHtml(p.name)}</a></li>`)
    .join('\n');
  return `<nav aria-label="Other ways to sign in" class="providers">
<ul>
${links}
</ul>
</nav>`;
}

/** Shown on /login while an upstream identity waits for the person to prove the account it will be linked to. */
export function renderPendingLinkNotice(link: { email: string; providerName: string }): string {
  const provider = escapeHtml(link.providerName);
  return `<p class="ok" role="status">Your ${provider} account uses the address <strong>${escapeHtml(link.email)}</strong>, \
which already has an account here. Sign in to that account (password or passkey) to link ${provider} to it.</p>`;
}

/** The /account section listing linked identities, with Unlink, and links to connect the other enabled providers. */
export function renderIdentitiesSection(data: {
  csrf: string;
  identities: ReadonlyArray<{ id: string; providerName: string; email: string | null; createdAt: Date }>;
  available: ReadonlyArray<{ name: string; slug: string }>;
  error?: string;
  formQuery?: string;
}): string {
  const error = data.error ? `<p class="error" role="alert" id="identities-error">${escapeHtml(data.error)}</p>` : '';
  const items = data.identities.length
    ? `<ul>\n${data.identities
        .map(
          (i) => `<li><strong>${escapeHtml(i.providerName)}</strong>${i.email ? ` <span class="muted">(${escapeHtml(i.email)})</span>` : ''}
<form method="post" action="${escapeHtml(`/account/identities/remove${data.formQuery ?? ''}`)}" class="inline">\
<input type="hidden" name="csrf" value="${escapeHtml(data.csrf)}"><input type="hidden" name="identity_id" value="${escapeHtml(i.id)}">\
<button type="submit" class="secondary" aria-label="Unlink ${escapeHtml(i.providerName)}">Unlink</button></form></li>`,
        )
        .join('\n')}\n</ul>`
    : '<p class="muted">No other sign-in is linked to your account.</p>';
  // A post with the CSRF field: linking adds a way to sign in, so another site must not be able to start it.
  const connect = data.available
    .map(
      (a) => `<form method="post" action="${escapeHtml(`/account/identities/link${data.formQuery ?? ''}`)}" class="inline">\
<input type="hidden" name="csrf" value="${escapeHtml(data.csrf)}"><input type="hidden" name="slug" value="${escapeHtml(a.slug)}">\
<button type="submit" class="secondary">Link ${escapeHtml(a.name)}</button></form>`,
    )
    .join('\n');
  return `<section aria-labelledby="identities-h" id="identities">
<h2 id="identities-h">Linked sign-ins</h2>
${error}${items}
${connect ? `<div class="actions">${connect}</div>` : ''}
</section>`;
}

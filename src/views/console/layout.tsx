import type { ComponentChildren } from 'preact';
import { Head, renderDocument } from '../layout';
import type { Messages } from '../../i18n';
import { pageEnv } from '../env';
import { CsrfField, ErrorSummary, Flash, RefusalDetail, titleOf, type FieldErrors } from '../kit';

/**
 * The administration console's frame (CONTRACT §14): a skip link, a header with the navigation (the current page
 * marked with aria-current), the signed-in account and sign-out, and the page. Colours are chosen for WCAG 2.1 AA
 * contrast in both colour schemes; tables collapse into labelled blocks on narrow screens. The only script is the
 * small same-origin copy-button helper (/static/console.js); everything works without it.
 */
const CONSOLE_CSS = `
  :root { color-scheme: light dark; --bg: #ffffff; --fg: #1a1d23; --muted: #4b5563; --accent: #1d4ed8; --accent-fg: #ffffff;
    --border: #c5cad3; --soft: #f3f4f6; --danger: #b42318; --ok: #067647; --focus: #1d4ed8; }
  @media (prefers-color-scheme: dark) {
    :root { --bg: #111318; --fg: #e8eaee; --muted: #b3bac6; --accent: #93b4ff; --accent-fg: #0b1020; --border: #4a5160;
      --soft: #1c2029; --danger: #ff9b8f; --ok: #6fdc9f; --focus: #93b4ff; }
  }
  * { box-sizing: border-box; }
  body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--bg); color: var(--fg); }
  a { color: var(--accent); }
  .skip { position: absolute; left: -10000px; top: 0; }
  .skip:focus { left: .5rem; top: .5rem; background: var(--bg); padding: .5rem; z-index: 2; }
  header.top { border-bottom: 1px solid var(--border); background: var(--soft); }
  .top-inner { max-width: 80rem; margin: 0 auto; padding: .5rem 1rem; display: flex; flex-wrap: wrap; gap: .5rem 1.5rem;
    align-items: center; }
  .brand { font-weight: 700; color: var(--fg); text-decoration: none; }
  nav.main { order: 3; flex-basis: 100%; }
  nav.main ul { list-style: none; display: flex; flex-wrap: wrap; gap: .1rem; margin: 0; padding: 0; }
  nav.main a { display: inline-block; white-space: nowrap; padding: .35rem .4rem; font-size: .93rem; border-radius: 6px; text-decoration: none; color: var(--fg); }
  nav.main a[aria-current="page"] { background: var(--accent); color: var(--accent-fg); }
  .who { margin-left: auto; display: flex; gap: .75rem; align-items: center; flex-wrap: wrap; font-size: .9rem; }
  main { max-width: 80rem; margin: 0 auto; padding: 1.25rem 1rem 3rem; }
  h1 { font-size: 1.5rem; margin: .25rem 0 1rem; overflow-wrap: anywhere; }
  p, dd, li { overflow-wrap: anywhere; }
  h2 { font-size: 1.15rem; margin: 2rem 0 .5rem; }
  p { margin: 0 0 1rem; }
  label { display: block; font-weight: 600; margin: .9rem 0 .25rem; }
  .check label, label.check { display: inline; font-weight: 400; margin: 0 0 0 .35rem; overflow-wrap: anywhere; }
  .check { margin: .35rem 0; }
  input[type=email], input[type=password], input[type=text], input[type=search], input[type=date], input[type=url], input[type=number], select, textarea {
    width: 100%; max-width: 36rem; padding: .5rem .65rem; font: inherit; color: var(--fg); background: var(--bg);
    border: 1px solid var(--border); border-radius: 6px; }
  textarea { min-height: 5rem; }
  fieldset { border: 1px solid var(--border); border-radius: 6px; max-width: 48rem; min-width: 0; margin: 1rem 0 0; padding: .5rem 1rem; }
  label code { overflow-wrap: anywhere; }
  legend { font-weight: 600; padding: 0 .25rem; }
  input:focus-visible, button:focus-visible, a:focus-visible, select:focus-visible, textarea:focus-visible, summary:focus-visible {
    outline: 3px solid var(--focus); outline-offset: 2px; }
  button, .button { display: inline-block; font: inherit; font-weight: 600; padding: .45rem 1rem; border-radius: 6px;
    border: 1px solid var(--accent); background: var(--accent); color: var(--accent-fg); cursor: pointer; text-decoration: none; }
  button.secondary, .button.secondary { background: transparent; color: var(--fg); border-color: var(--border); }
  button.danger { background: transparent; color: var(--danger); border-color: var(--danger); }
  .actions { display: flex; gap: .75rem; margin-top: 1rem; flex-wrap: wrap; align-items: center; }
  .error { color: var(--danger); border: 1px solid var(--danger); border-radius: 6px; padding: .5rem .75rem; }
  .field-error { color: var(--danger); margin: .25rem 0 0; font-size: .95rem; }
  .ok { border: 1px solid var(--ok); border-radius: 6px; padding: .5rem .75rem; }
  .muted { color: var(--muted); }
  .hint { color: var(--muted); font-size: .9rem; margin: .2rem 0 0; max-width: 48rem; }
  .inline { display: inline; }
  .cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(10rem, 1fr)); gap: .75rem; margin: 0 0 1.5rem;
    padding: 0; list-style: none; }
  .cards li { border: 1px solid var(--border); border-radius: 8px; padding: .75rem 1rem; }
  .cards .n { display: block; font-size: 1.6rem; font-weight: 700; }
  .filters { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: end; margin-bottom: 1rem; }
  .filters > div { min-width: 10rem; flex: 1 1 10rem; max-width: 20rem; }
  .filters label { margin-top: 0; }
  table { width: 100%; border-collapse: collapse; font-size: .95rem; margin-bottom: 1rem; }
  caption { text-align: left; font-weight: 600; padding: .25rem 0; }
  th, td { text-align: left; padding: .45rem .5rem; border-bottom: 1px solid var(--border); vertical-align: top; }
  th { white-space: nowrap; }
  td.wrap, td code { overflow-wrap: anywhere; }
  code, .secret { font-family: ui-monospace, monospace; }
  td code.type { overflow-wrap: normal; white-space: nowrap; }
  dl.detail { margin: 0; display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0 .5rem; font-size: .9rem; }
  dl.detail dt { color: var(--muted); }
  dl.detail dd { margin: 0; overflow-wrap: anywhere; }
  .badge { display: inline-block; padding: 0 .45rem; border-radius: 999px; border: 1px solid var(--border); font-size: .85rem;
    white-space: nowrap; }
  .badge.off { color: var(--danger); border-color: var(--danger); }
  .badge.invited { font-style: italic; }
  .pager { display: flex; gap: 1rem; align-items: center; flex-wrap: wrap; }
  dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .35rem 1rem; margin: 0 0 1rem; }
  dl.facts dt { font-weight: 600; }
  dl.facts dd { margin: 0; overflow-wrap: anywhere; }
  .copy-row { display: flex; gap: .5rem; align-items: center; flex-wrap: wrap; }
  .copy-row code { padding: .25rem .4rem; background: var(--soft); border-radius: 4px; overflow-wrap: anywhere; }
  pre.settings { background: var(--soft); padding: .75rem; border-radius: 6px; overflow-x: auto; }
  details { margin: .75rem 0; }
  summary { cursor: pointer; color: var(--accent); }
  .chart svg { width: 100%; max-width: 48rem; height: auto; }
  .chart .succeeded { fill: var(--accent); }
  .chart .failed { fill: var(--danger); }
  .chart .axis { stroke: var(--border); }
  .chart text { fill: var(--fg); font-size: 11px; }
  .legend { display: flex; flex-wrap: wrap; gap: .25rem 1rem; list-style: none; padding: 0; margin: .25rem 0; }
  .legend li { white-space: nowrap; }
  .swatch { display: inline-block; width: .8rem; height: .8rem; margin-right: .3rem; vertical-align: -1px; border-radius: 2px; }
  .swatch.succeeded { background: var(--accent); }
  .swatch.failed { background: var(--danger); }
  ul.choices, ol.choices { list-style: none; padding: 0; margin: 0 0 1rem; display: grid; gap: .75rem; max-width: 48rem; }
  ul.choices li, ol.choices li { border: 1px solid var(--border); border-radius: 8px; padding: .75rem 1rem; }
  ul.choices a, ol.choices a { font-weight: 600; display: block; }
  .snippet pre { margin: 0 0 .5rem; }
  .secret-box { border: 1px solid var(--ok); border-radius: 8px; padding: .75rem 1rem; max-width: 48rem; margin-bottom: 1rem; }
  section.panel { border-top: 1px solid var(--border); margin-top: 1.5rem; }
  .error-summary { border: 3px solid var(--danger); border-radius: 6px; padding: .75rem 1rem; margin-bottom: 1rem; max-width: 48rem; }
  .error-summary h2 { margin: 0 0 .5rem; color: var(--danger); }
  .error-summary ul { margin: 0; padding-left: 1.25rem; }
  .error-summary a { color: var(--danger); font-weight: 600; }
  @media (max-width: 40rem) {
    .who { margin-left: 0; }
    nav.main a { padding: .25rem .4rem; }
    table.collapse, table.collapse caption, table.collapse tbody, table.collapse tr, table.collapse td { display: block; }
    table.collapse thead { position: absolute; left: -10000px; }
    table.collapse tr { border-bottom: 1px solid var(--border); padding: .5rem 0; }
    table.collapse td { border: 0; padding: .1rem 0; overflow-wrap: anywhere; }
    table.collapse td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); font-weight: 600; }
    dl.facts { grid-template-columns: 1fr; }
    dl.facts dd { margin-bottom: .5rem; }
  }
`;

export type ConsoleSection =
  | 'overview'
  | 'users'
  | 'roles'
  | 'applications'
  | 'resources'
  | 'identity-providers'
  | 'saml'
  | 'webhooks'
  | 'scim'
  | 'audit'
  | 'signing-keys'
  | 'settings';

type NavLabel = keyof Messages['console']['nav'];

/**
 * The console's sections. Who sees an entry is not declared here: an entry is shown when the signed-in admin passes the
 * guard of the page it links to (`ConsoleFrame.sections`, read from that route's declaration).
 */
export const CONSOLE_NAV: ReadonlyArray<{ id: ConsoleSection; href: string; label: NavLabel }> = [
  { id: 'overview', href: '/admin', label: 'overview' },
  { id: 'users', href: '/admin/users', label: 'users' },
  { id: 'roles', href: '/admin/roles', label: 'roles' },
  { id: 'applications', href: '/admin/applications', label: 'applications' },
  { id: 'resources', href: '/admin/api-resources', label: 'resources' },
  { id: 'identity-providers', href: '/admin/identity-providers', label: 'identityProviders' },
  { id: 'saml', href: '/admin/saml-apps', label: 'saml' },
  { id: 'webhooks', href: '/admin/webhooks', label: 'webhooks' },
  { id: 'scim', href: '/admin/scim', label: 'scim' },
  { id: 'audit', href: '/admin/audit', label: 'audit' },
  { id: 'signing-keys', href: '/admin/signing-keys', label: 'signingKeys' },
  { id: 'settings', href: '/admin/settings', label: 'settings' },
];

export interface ConsoleFrame {
  title: string;
  /** The navigation entry marked current; none on error pages. */
  section?: ConsoleSection;
  email: string;
  csrf: string;
  /** Permissions the signed-in person holds (super_admin: every one). */
  permissions?: readonly string[];
  /** The sections whose page the signed-in admin may open: the navigation shows only these. */
  sections?: readonly ConsoleSection[];
  /** `detail`: the API's English reason of a refusal, shown marked lang="en" on a page in another language. */
  flash?: { kind: 'ok' | 'error'; message: string; detail?: string };
  /** A refused form's errors: the title starts with "Error" and a summary at the top links to each field. */
  errors?: FieldErrors;
}

export function ConsoleLayout(props: ConsoleFrame & { children?: ComponentChildren }) {
  const { locale, t, brand } = pageEnv();
  const c = t.console;
  return (
    <html lang={locale}>
      <Head title={`${titleOf(props.title, props.errors)} · ${c.titleSuffix}`} css={CONSOLE_CSS} scripts={['/static/console.js']} />
      <body>
        <a class="skip" href="#content">
          {c.skip}
        </a>
        <header class="top">
          <div class="top-inner">
            <a class="brand" href="/admin">
              {c.brand(brand.name)}
            </a>
            <nav class="main" aria-label={c.navLabel}>
              <ul>
                {CONSOLE_NAV.filter((item) => props.sections?.includes(item.id)).map((item) => (
                  <li>
                    <a href={item.href} aria-current={item.id === props.section ? 'page' : undefined}>
                      {c.nav[item.label]}
                    </a>
                  </li>
                ))}
              </ul>
            </nav>
            <div class="who">
              <a href="/account">{props.email}</a>
              <form method="post" action="/logout" class="inline">
                <CsrfField csrf={props.csrf} />
                <button type="submit" class="secondary">
                  {c.signOut}
                </button>
              </form>
            </div>
          </div>
        </header>
        <main id="content" tabIndex={-1}>
          {props.flash?.detail ? (
            <p class={props.flash.kind === 'error' ? 'error' : 'ok'} role={props.flash.kind === 'error' ? 'alert' : 'status'}>
              {props.flash.message} <RefusalDetail detail={props.flash.detail} />
            </p>
          ) : (
            <Flash message={props.flash?.message} kind={props.flash?.kind} />
          )}
          <ErrorSummary errors={props.errors} />
          {props.children}
        </main>
      </body>
    </html>
  );
}

export function renderConsole(frame: ConsoleFrame, body: ComponentChildren): string {
  return renderDocument(<ConsoleLayout {...frame}>{body}</ConsoleLayout>);
}

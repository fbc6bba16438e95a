import type { ComponentChildren, VNode } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { darkLinkColor, ON_ACCENT, SCHEMES } from '../lib/palette';
import { pageEnv } from './env';
import { ErrorSummary, titleOf, type FieldErrors } from './kit';

/**
 * Every page is a tree of typed components rendered on the server by preact-render-to-string, which escapes every
 * text child and attribute value: user data can only reach the HTML as text. The one raw insertion in src/views is
 * the page's own constant CSS (and the QR code SVG made by the qrcode library, see account.tsx).
 */
export function renderDocument(page: VNode): string {
  return `<!doctype html>\n${renderToString(page)}`;
}

const BASE_CSS = `
  * { box-sizing: border-box; }
  body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--bg); color: var(--text); }
  main { max-width: 26rem; margin: 8vh auto; padding: 2rem 1.5rem; border: 1px solid var(--frame); border-radius: 12px; }
  h1 { font-size: 1.4rem; margin: 0 0 1rem; }
  p { margin: 0 0 1rem; }
  label { display: block; font-weight: 600; margin: 1rem 0 .25rem; }
  input[type=email], input[type=password], input[type=text] { width: 100%; padding: .65rem .75rem; font: inherit; border: 1px solid var(--border); border-radius: 8px; background: var(--bg); color: var(--text); }
  input:focus-visible, button:focus-visible, a:focus-visible { outline: 3px solid var(--link); outline-offset: 2px; }
  button { font: inherit; font-weight: 600; padding: .65rem 1.2rem; border-radius: 8px; border: 1px solid var(--accent); background: var(--accent); color: var(--on-accent); cursor: pointer; }
  button.secondary { background: transparent; color: var(--text); border-color: var(--border); }
  a.button { display: inline-block; font-weight: 600; padding: .65rem 1.2rem; border-radius: 8px; border: 1px solid var(--accent); background: var(--accent); color: var(--on-accent); text-decoration: none; }
  a.button.secondary { background: transparent; color: var(--text); border-color: var(--border); }
  a { color: var(--link); }
  summary { color: var(--link); }
  .brand { display: flex; align-items: center; gap: .5rem; margin: 0 0 1.25rem; font-weight: 600; color: var(--muted); }
  .brand img { max-height: 2rem; max-width: 10rem; }
  .subtitle { margin: -.75rem 0 1rem; color: var(--muted); }
  .codes-panel { border: 2px solid var(--ok); border-radius: 8px; padding: .75rem 1rem; margin: 0 0 1.5rem; }
  .codes-panel:focus { outline: 3px solid var(--link); outline-offset: 2px; }
  .codes-panel h2 { margin-top: 0; }
  nav.providers ul { list-style: none; padding: 0; margin: 1.5rem 0 0; display: grid; gap: .5rem; }
  nav.providers a.button { display: block; text-align: center; }
  .actions { display: flex; gap: .75rem; margin-top: 1.5rem; flex-wrap: wrap; }
  .error { color: var(--danger); border: 1px solid var(--danger); border-radius: 8px; padding: .5rem .75rem; }
  .muted { color: var(--muted); font-size: .9rem; }
  .error-summary { border: 3px solid var(--danger); border-radius: 8px; padding: .75rem 1rem; margin: 0 0 1.25rem; }
  .error-summary:focus { outline: 3px solid var(--link); outline-offset: 2px; }
  .error-summary h2 { margin: 0 0 .5rem; font-size: 1.1rem; color: var(--danger); }
  .error-summary ul { margin: 0; padding-left: 1.25rem; }
  .error-summary a { color: var(--danger); font-weight: 600; }
  .field-error { color: var(--danger); margin: .25rem 0 0; font-size: .95rem; }
  ul.scopes { padding-left: 1.2rem; }
  main.wide { max-width: 44rem; }
  h2 { font-size: 1.1rem; margin: 2rem 0 .5rem; }
  h3 { font-size: 1rem; margin: 1.25rem 0 .5rem; }
  .row label { margin-top: .5rem; }
  section { border-top: 1px solid var(--border); margin-top: 1.5rem; }
  table { width: 100%; border-collapse: collapse; font-size: .95rem; }
  th, td { text-align: left; padding: .4rem .3rem; border-bottom: 1px solid var(--border); vertical-align: top; overflow-wrap: anywhere; }
  .inline { display: inline; }
  td.nowrap, td button { white-space: nowrap; overflow-wrap: normal; }
  th, td time { overflow-wrap: normal; }
  .user-code { font-family: ui-monospace, monospace; font-size: 1.75rem; letter-spacing: .12em; white-space: nowrap; overflow-wrap: normal; }
  input.user-code { font-size: 1.5rem; }
  .row { display: flex; gap: .5rem; flex-wrap: wrap; align-items: end; }
  .row > * { margin: 0; }
  .ok { border: 1px solid var(--ok); border-radius: 8px; padding: .5rem .75rem; }
  code, .secret { font-family: ui-monospace, monospace; overflow-wrap: anywhere; }
  ol.codes { columns: 2; font-family: ui-monospace, monospace; }
  .qr svg { width: 12rem; height: 12rem; background: #fff; padding: .5rem; border-radius: 8px; }
  details { margin: 1rem 0; }
  summary { cursor: pointer; }
  @media (max-width: 30rem) {
    main { margin: 0; border: 0; border-radius: 0; padding: 1.25rem 1rem; }
    ol.codes { columns: 1; }
    table, tbody, tr, td { display: block; }
    thead { position: absolute; left: -10000px; }
    tr { border-bottom: 1px solid var(--border); padding: .5rem 0; }
    td { border: 0; padding: .1rem 0; }
    td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); }
    td.nowrap { white-space: normal; overflow-wrap: normal; font-size: .8rem; }
  }
`;

const schemeVars = (s: (typeof SCHEMES)[keyof typeof SCHEMES]) =>
  `--bg: ${s.bg}; --text: ${s.text}; --muted: ${s.muted}; --border: ${s.border}; --frame: ${s.border}; --danger: ${s.danger}; --ok: ${s.ok};`;

/**
 * The colours of both schemes from lib/palette.ts (one declaration, checked by test/unit/palette.test.ts) and the
 * brand colour (validated at start): buttons filled with it in both schemes, links in it on light and in its lighter
 * tint on dark.
 */
const paletteCache = new Map<string, string>();
export function paletteCss(brand: string): string {
  let css = paletteCache.get(brand);
  if (!css) {
    css =
      `:root { color-scheme: light dark; ${schemeVars(SCHEMES.light)} --accent: ${brand}; --on-accent: ${ON_ACCENT}; --link: ${brand}; }\n` +
      `@media (prefers-color-scheme: dark) { :root { ${schemeVars(SCHEMES.dark)} --link: ${darkLinkColor(brand)}; } }\n`;
    paletteCache.set(brand, css);
  }
  return css;
}

/** The <head> every page shares; `css` is a module constant (never user data). */
export function Head(props: { title: string; css: string; scripts?: string[]; children?: ComponentChildren }) {
  return (
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{props.title}</title>
      <link rel="icon" href="/favicon.ico" type="image/svg+xml" />
      {(props.scripts ?? []).map((src) => (
        <script src={src} defer />
      ))}
      {props.children}
      <style dangerouslySetInnerHTML={{ __html: props.css }} />
    </head>
  );
}

/** The shared frame of every built-in sign-in and account page: small, accessible, readable on a phone, no JavaScript. */
export function Page(props: { title: string; scripts?: string[]; wide?: boolean; errors?: FieldErrors; children?: ComponentChildren }) {
  const { locale, brand } = pageEnv();
  const refused = props.errors && Object.values(props.errors).some((e) => e !== undefined);
  // A refused form (CONTRACT §18): the summary's focus and links are the small same-origin script's work.
  const scripts = refused ? [...(props.scripts ?? []), FORM_ERRORS_SCRIPT_PATH] : props.scripts;
  return (
    <html lang={locale}>
      <Head title={`${titleOf(props.title, props.errors)} · ${brand.name}`} css={paletteCss(brand.color) + BASE_CSS} scripts={scripts} />
      <body>
        <main class={props.wide ? 'wide' : undefined}>
          <p class="brand">
            {brand.logoUrl ? <img src={brand.logoUrl} alt="" /> : null}
            <span>{brand.name}</span>
          </p>
          <ErrorSummary errors={props.errors} idPrefix="" />
          {props.children}
        </main>
      </body>
    </html>
  );
}

/** The script that focuses a refused form's error summary and makes its links move the focus (views/form-errors-script.ts). */
export const FORM_ERRORS_SCRIPT_PATH = '/static/form-errors.js';

/**
 * Renders one built-in page; with `errors` (a refused form, by input id: `_form` for the form as a whole) the title
 * starts with "Error" and the summary stands at the top, linking to each field.
 */
export function renderPage(
  options: { title: string; scripts?: string[]; wide?: boolean; errors?: FieldErrors },
  body: ComponentChildren,
): string {
  return renderDocument(
    <Page title={options.title} scripts={options.scripts} wide={options.wide} errors={options.errors}>
      {body}
    </Page>,
  );
}

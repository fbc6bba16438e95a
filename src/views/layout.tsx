import type { ComponentChildren, VNode } from 'preact';
import { renderToString } from 'preact-render-to-string';

/**
 * Every page is a tree of typed components rendered on the server by preact-render-to-string, which escapes every
 * text child and attribute value: user data can only reach the HTML as text. The one raw insertion in src/views is
 * the page's own constant CSS (and the QR code SVG made by the qrcode library, see account.tsx).
 */
export function renderDocument(page: VNode): string {
  return `<!doctype html>\n${renderToString(page)}`;
}

const PAGE_CSS = `
  :root { color-scheme: light dark; --accent: #2563eb; --border: #d0d5dd; --muted: #667085; --danger: #b42318; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: Canvas; color: CanvasText; }
  main { max-width: 26rem; margin: 8vh auto; padding: 2rem 1.5rem; border: 1px solid var(--border); border-radius: 12px; }
  h1 { font-size: 1.4rem; margin: 0 0 1rem; }
  p { margin: 0 0 1rem; }
  label { display: block; font-weight: 600; margin: 1rem 0 .25rem; }
  input[type=email], input[type=password], input[type=text] { width: 100%; padding: .65rem .75rem; font: inherit; border: 1px solid var(--border); border-radius: 8px; }
  input:focus-visible, button:focus-visible, a:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
  button { font: inherit; font-weight: 600; padding: .65rem 1.2rem; border-radius: 8px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
  button.secondary { background: transparent; color: CanvasText; border-color: var(--border); }
  a.button { display: block; text-align: center; font-weight: 600; padding: .65rem 1.2rem; border-radius: 8px; }
  a.button { border: 1px solid var(--border); color: CanvasText; text-decoration: none; }
  nav.providers ul { list-style: none; padding: 0; margin: 1.5rem 0 0; display: grid; gap: .5rem; }
  a.button { display: block; text-align: center; font-weight: 600; padding: .65rem 1.2rem; border-radius: 8px; }
  a.button { border: 1px solid var(--border); color: CanvasText; text-decoration: none; }
  nav.providers ul { list-style: none; padding: 0; margin: 1.5rem 0 0; display: grid; gap: .5rem; }
  .actions { display: flex; gap: .75rem; margin-top: 1.5rem; flex-wrap: wrap; }
  .error { color: var(--danger); border: 1px solid var(--danger); border-radius: 8px; padding: .5rem .75rem; }
  .muted { color: var(--muted); font-size: .9rem; }
  ul.scopes { padding-left: 1.2rem; }
  main.wide { max-width: 44rem; }
  h2 { font-size: 1.1rem; margin: 2rem 0 .5rem; }
  h3 { font-size: 1rem; margin: 1.25rem 0 .5rem; }
  .row label { margin-top: .5rem; }
  section { border-top: 1px solid var(--border); margin-top: 1.5rem; }
  table { width: 100%; border-collapse: collapse; font-size: .95rem; }
  th, td { text-align: left; padding: .4rem .3rem; border-bottom: 1px solid var(--border); vertical-align: top; overflow-wrap: anywhere; }
  .inline { display: inline; }
  .row { display: flex; gap: .5rem; flex-wrap: wrap; align-items: end; }
  .row > * { margin: 0; }
  .ok { border: 1px solid #067647; border-radius: 8px; padding: .5rem .75rem; }
  code, .secret { font-family: ui-monospace, monospace; overflow-wrap: anywhere; }
  ol.codes { columns: 2; font-family: ui-monospace, monospace; }
  .qr svg { width: 12rem; height: 12rem; background: #fff; padding: .5rem; border-radius: 8px; }
  details { margin: 1rem 0; }
  summary { cursor: pointer; color: var(--accent); }
  @media (max-width: 30rem) {
    main { margin: 0; border: 0; border-radius: 0; padding: 1.25rem 1rem; }
    ol.codes { columns: 1; }
    table, tbody, tr, td { display: block; }
    thead { position: absolute; left: -10000px; }
    tr { border-bottom: 1px solid var(--border); padding: .5rem 0; }
    td { border: 0; padding: .1rem 0; }
    td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); }
  }
`;

/** The <head> every page shares; `css` is a module constant (never user data). */
export function Head(props: { title: string; css: string; scripts?: string[]; children?: ComponentChildren }) {
  return (
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{props.title}</title>
      {(props.scripts ?? []).map((src) => (
        <script src={src} defer />
      ))}
      {props.children}
      <style dangerouslySetInnerHTML={{ __html: props.css }} />
    </head>
  );
}

/** The shared frame of every built-in sign-in and account page: small, accessible, readable on a phone, no JavaScript. */
export function Page(props: { title: string; scripts?: string[]; wide?: boolean; children?: ComponentChildren }) {
  return (
    <html lang="en">
      <Head title={props.title} css={PAGE_CSS} scripts={props.scripts} />
      <body>
        <main class={props.wide ? 'wide' : undefined}>{props.children}</main>
      </body>
    </html>
  );
}

/** Renders one built-in page. */
export function renderPage(options: { title: string; scripts?: string[]; wide?: boolean }, body: ComponentChildren): string {
  return renderDocument(
    <Page title={options.title} scripts={options.scripts} wide={options.wide}>
      {body}
    </Page>,
  );
}

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"'`=]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A new password typed twice (set-password, setup): labels, length hint, autocomplete for password managers. */
export function newPasswordFields(options: { minLength: number; label: string; repeatLabel: string; describedBy?: string }): string {
  const described = options.describedBy ? ` aria-describedby="${escapeHtml(options.describedBy)}"` : '';
  return `<label for="password">${escapeHtml(options.label)}</label>
  <input type="password" id="password" name="password" autocomplete="new-password" minlength="${options.minLength}" required${described}>
  <p class="muted">At least ${options.minLength} characters.</p>
  <label for="password_confirm">${escapeHtml(options.repeatLabel)}</label>
  <input type="password" id="password_confirm" name="password_confirm" autocomplete="new-password" minlength="${options.minLength}" required>`;
}

/**
 * The shared frame of every built-in page: small, accessible, readable on a phone, no JavaScript.
 * `body` must already be escaped HTML.
 */
export function renderPage(options: { title: string; body: string; scripts?: string[]; wide?: boolean }): string {
  const scripts = (options.scripts ?? []).map((src) => `<script src="${escapeHtml(src)}" defer></script>`).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(options.title)}</title>
${scripts}
<style>
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
</style>
</head>
<body>
<main${options.wide ? ' class="wide"' : ''}>
${options.body}
</main>
</body>
</html>`;
}

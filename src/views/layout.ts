/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"'`=]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The shared frame of every built-in page: small, accessible, readable on a phone, no JavaScript.
 * `body` must already be escaped HTML.
 */
export function renderPage(options: { title: string; body: string }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(options.title)}</title>
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
  .actions { display: flex; gap: .75rem; margin-top: 1.5rem; flex-wrap: wrap; }
  .error { color: var(--danger); border: 1px solid var(--danger); border-radius: 8px; padding: .5rem .75rem; }
  .muted { color: var(--muted); font-size: .9rem; }
  ul.scopes { padding-left: 1.2rem; }
</style>
</head>
<body>
<main>
${options.body}
</main>
</body>
</html>`;
}

/**
 * /static/console.js: the console's only script, a progressive enhancement. It focuses a refused form's error summary,
 * scrolls the current section of a
 * navigation that scrolls sideways (narrow screens) into view. Buttons marked `data-copy="<id>"` are revealed and copy
 * the text of element <id> to the clipboard, announcing the result in the button itself, in the page's language (the
 * texts ride on data-copied and data-copy-failed). Without JavaScript the values stay selectable text.
 */
export const CONSOLE_SCRIPT = `(() => {
  // A refused form: its error summary takes focus (autofocus does it too where the browser honours it).
  const summary = document.getElementById('error-summary');
  if (summary && document.activeElement !== summary) summary.focus();
  // Each of its links moves the focus to the field it names (not only the scroll position).
  for (const link of summary ? summary.querySelectorAll('a[href^="#f-"]') : []) {
    link.addEventListener('click', (event) => {
      const field = document.getElementById(link.getAttribute('href').slice(1));
      if (!field) return;
      event.preventDefault();
      field.focus();
      field.scrollIntoView({ block: 'center' });
    });
  }
  // On narrow screens the navigation scrolls sideways: bring the current section into view.
  const current = document.querySelector('nav.main [aria-current="page"]');
  const nav = current && current.closest('nav');
  if (nav && nav.scrollWidth > nav.clientWidth) nav.scrollLeft = current.offsetLeft - (nav.clientWidth - current.offsetWidth) / 2;
  for (const button of document.querySelectorAll('button[data-copy]')) {
    const target = document.getElementById(button.getAttribute('data-copy'));
    if (!target || !navigator.clipboard) continue;
    button.hidden = false;
    button.addEventListener('click', async () => {
      try {
        await navigator.clipboard.writeText(target.textContent || '');
        button.textContent = button.getAttribute('data-copied') || button.textContent;
      } catch {
        button.textContent = button.getAttribute('data-copy-failed') || button.textContent;
      }
    });
  }
})();
`;

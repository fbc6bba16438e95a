/**
 * /static/console.js: the console's only script, a progressive enhancement. Buttons marked `data-copy="<id>"` are
 * revealed and copy the text of element <id> to the clipboard, announcing the result in the button itself, in the
 * page's language (the texts ride on data-copied and data-copy-failed). Without JavaScript the values stay selectable.
 */
export const CONSOLE_SCRIPT = `(() => {
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

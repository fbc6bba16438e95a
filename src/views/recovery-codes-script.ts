/**
 * /static/recovery-codes.js: progressive enhancement of the recovery-codes panel (views/account.tsx). It moves focus
 * to the panel (autofocus already does in most browsers), reveals the copy button and announces its result in the
 * panel's live region, in the page's language (the texts ride on data- attributes). Without JavaScript the codes are
 * selectable text and the download is a plain data: link.
 */
export const RECOVERY_CODES_SCRIPT = `(() => {
  const panel = document.querySelector('[data-recovery-codes]');
  if (!panel) return;
  if (document.activeElement !== panel) panel.focus();
  const status = panel.querySelector('[data-copy-status]');
  const button = panel.querySelector('button[data-copy-codes]');
  if (!button || !navigator.clipboard) return;
  button.hidden = false;
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(button.getAttribute('data-copy-codes') || '');
      status.textContent = button.getAttribute('data-copied');
    } catch {
      status.textContent = button.getAttribute('data-copy-failed');
    }
  });
})();
`;

/**
 * /static/form-errors.js: loaded by a page whose form was refused (CONTRACT §18). The error summary takes the focus
 * (autofocus does it too where the browser honours it), and each of its links moves the focus to the field it names,
 * not only the scroll position. Without JavaScript the summary and its links still work as anchors.
 */
export const FORM_ERRORS_SCRIPT = `(() => {
  const summary = document.getElementById('error-summary');
  if (!summary) return;
  if (document.activeElement !== summary) summary.focus();
  for (const link of summary.querySelectorAll('a[href^="#"]')) {
    link.addEventListener('click', (event) => {
      const field = document.getElementById(decodeURIComponent(link.getAttribute('href').slice(1)));
      if (!field) return;
      event.preventDefault();
      const details = field.closest('details');
      if (details) details.open = true;
      field.focus();
      field.scrollIntoView({ block: 'center' });
    });
  }
})();
`;

import { escapeHtml, renderPage } from './layout';

/**
 * RP-Initiated Logout confirmation (CONTRACT §9): shown when the request cannot be tied to the signed-in user, so
 * that a link on another site cannot end the session unasked. The request's parameters ride along as hidden
 * fields and are checked again when the form is posted.
 */
export function renderLogoutConfirmPage(options: {
  csrf: string;
  userEmail: string;
  clientName?: string;
  params: Record<string, string | undefined>;
}): string {
  const hidden = Object.entries(options.params)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `  <input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n');
  const from = options.clientName ? `<strong>${escapeHtml(options.clientName)}</strong> asks` : 'You are asked';
  return renderPage({
    title: 'Sign out?',
    body: `<h1>Sign out?</h1>
<p>${from} to end your single sign-on session in this browser.</p>
<p>Signed in as <strong>${escapeHtml(options.userEmail)}</strong>. Signing out here signs you out of every app that relies on this session.</p>
<form method="post" action="/api/oauth/logout">
  <input type="hidden" name="csrf" value="${escapeHtml(options.csrf)}">
  <input type="hidden" name="confirm" value="yes">
${hidden}
  <div class="actions"><button type="submit">Sign out</button></div>
</form>
<div class="actions muted"><a href="/login">Stay signed in</a></div>`,
  });
}

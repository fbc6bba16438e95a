import { escapeHtml, renderPage } from './layout';

/** /device (RFC 8628 §3.3): the user types the code their device shows. No JavaScript, plain form posts. */
export function renderDeviceEntryPage(options: { csrf: string; userCode?: string; userEmail: string; error?: string }): string {
  const error = options.error ? `<p class="error" role="alert" id="device-error">${escapeHtml(options.error)}</p>` : '';
  const describedBy = options.error ? ' aria-describedby="device-error"' : '';
  return renderPage({
    title: 'Connect a device',
    body: `<h1>Connect a device</h1>
<p class="muted">Signed in as ${escapeHtml(options.userEmail)}</p>
${error}<form method="post" action="/device" novalidate>
  <input type="hidden" name="csrf" value="${escapeHtml(options.csrf)}">
  <label for="user_code">Enter the code shown on your device</label>
  <input type="text" id="user_code" name="user_code" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false"
    required autofocus placeholder="XXXX-XXXX" value="${escapeHtml(options.userCode ?? '')}"${describedBy}>
  <div class="actions"><button type="submit">Continue</button></div>
</form>`,
  });
}

/** The request behind a code: which app, what it may do; Approve or Deny. */
export function renderDeviceConfirmPage(options: {
  csrf: string;
  userCode: string;
  clientName: string;
  scopes: Array<{ scope: string; description: string }>;
  userEmail: string;
}): string {
  const items = options.scopes.map((s) => `<li>${escapeHtml(s.description)}</li>`).join('\n    ');
  return renderPage({
    title: `Allow ${options.clientName}?`,
    body: `<h1><span id="client-name">${escapeHtml(options.clientName)}</span> wants to access your account</h1>
<p class="muted">Signed in as ${escapeHtml(options.userEmail)} &middot; code <strong id="user-code">${escapeHtml(options.userCode)}</strong></p>
<p>Only continue if this code is the one your device shows.</p>
<p id="scopes-heading">If you allow it, this device will be able to:</p>
<ul class="scopes" aria-labelledby="scopes-heading">
    ${items}
</ul>
<form method="post" action="/device/decide">
  <input type="hidden" name="csrf" value="${escapeHtml(options.csrf)}">
  <input type="hidden" name="user_code" value="${escapeHtml(options.userCode)}">
  <div class="actions">
    <button type="submit" name="decision" value="approve">Approve</button>
    <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
  </div>
</form>`,
  });
}

export function renderDeviceDonePage(options: { approved: boolean; clientName: string }): string {
  const title = options.approved ? 'Device connected' : 'Request denied';
  const message = options.approved
    ? `${options.clientName} is now signed in. You can return to your device.`
    : `${options.clientName} was not given access. You can close this page.`;
  return renderPage({ title, body: `<h1>${escapeHtml(title)}</h1>\n<p role="status" id="device-result">${escapeHtml(message)}</p>` });
}

import { renderIdentitiesSection } from './federation';
import { escapeHtml, renderPage } from './layout';
import { PASSKEY_SCRIPTS } from './login';

export type AccountSection = 'profile' | 'password' | 'sessions' | 'apps' | 'second-factors' | 'identities';

export interface AccountPageData {
  csrf: string;
  email: string;
  firstName: string;
  lastName: string;
  sessions: Array<{ id: string; userAgent: string | null; ip: string | null; lastUsedAt: Date; clientName: string | null; current: boolean }>;
  apps: Array<{ clientId: string; name: string; scopes: string[]; grantedAt: Date }>;
  totp: 'on' | 'pending' | 'off';
  /** While an enrolment is pending: the secret as text and its QR code (server-made SVG). */
  pendingTotp?: { secret: string; otpauthUrl: string; qrSvg: string };
  passkeys: Array<{ id: string; name: string; createdAt: Date; lastUsedAt: Date | null }>;
  recoveryCodesLeft: number;
  /** Shown once, right after they were made. */
  recoveryCodes?: string[];
  notice?: string;
  error?: { section: AccountSection; message: string };
  /** MFA_REQUIRED_FOR_ADMINS sent this person here; `continueTo` once they may go on. */
  enrolRequired?: boolean;
  continueTo?: string;
  /** Query string kept on every form's action (the enrolment context). */
  formQuery?: string;
  /** CONTRACT §16: linked identities of other providers, and the enabled providers not linked yet. */
  identities?: Array<{ id: string; providerName: string; email: string | null; createdAt: Date }>;
  linkableProviders?: Array<{ name: string; slug: string }>;
}

const date = (d: Date) => `<time datetime="${d.toISOString()}">${escapeHtml(d.toISOString().slice(0, 16).replace('T', ' '))} UTC</time>`;

/** A form's action, keeping the enrolment context (?enrol=required&return_to=…) across posts. */
function act(data: AccountPageData, path: string): string {
  return escapeHtml(`/account/${path}${data.formQuery ?? ''}`);
}

function csrfField(csrf: string): string {
  return `<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">`;
}

function errorFor(data: AccountPageData, section: AccountSection): string {
  return data.error?.section === section ? `<p class="error" role="alert" id="${section}-error">${escapeHtml(data.error.message)}</p>` : '';
}

function describedBy(data: AccountPageData, section: AccountSection): string {
  return data.error?.section === section ? ` aria-describedby="${section}-error"` : '';
}

function profileSection(data: AccountPageData): string {
  const d = describedBy(data, 'profile');
  return `<section aria-labelledby="profile-h">
<h2 id="profile-h">Profile</h2>
${errorFor(data, 'profile')}<form method="post" action="${act(data, 'profile')}">
  ${csrfField(data.csrf)}
  <label for="first_name">First name</label>
  <input type="text" id="first_name" name="first_name" autocomplete="given-name" maxlength="100" required value="${escapeHtml(data.firstName)}"${d}>
  <label for="last_name">Last name</label>
  <input type="text" id="last_name" name="last_name" autocomplete="family-name" maxlength="100" required value="${escapeHtml(data.lastName)}"${d}>
  <div class="actions"><button type="submit">Save profile</button></div>
</form>
</section>`;
}

function passwordSection(data: AccountPageData): string {
  const d = describedBy(data, 'password');
  return `<section aria-labelledby="password-h">
<h2 id="password-h">Password</h2>
${errorFor(data, 'password')}<form method="post" action="${act(data, 'password')}">
  ${csrfField(data.csrf)}
  <input type="text" name="username" autocomplete="username" value="${escapeHtml(data.email)}" hidden>
  <label for="current_password">Current password</label>
  <input type="password" id="current_password" name="current_password" autocomplete="current-password" required${d}>
  <label for="new_password">New password</label>
  <input type="password" id="new_password" name="new_password" autocomplete="new-password" minlength="6" required${d}>
  <label for="new_password_confirm">New password again</label>
  <input type="password" id="new_password_confirm" name="new_password_confirm" autocomplete="new-password" minlength="6" required${d}>
  <p class="muted">Changing the password signs out every other session.</p>
  <div class="actions"><button type="submit">Change password</button></div>
</form>
</section>`;
}

function sessionsSection(data: AccountPageData): string {
  const rows = data.sessions
    .map((s) => {
      const what = s.clientName ? `App: ${escapeHtml(s.clientName)}` : escapeHtml(s.userAgent ?? 'Unknown browser');
      const action = s.current
        ? '<strong>This browser</strong>'
        : `<form method="post" action="${act(data, 'sessions/revoke')}" class="inline">${csrfField(data.csrf)}<input type="hidden" name="session_id" value="${escapeHtml(s.id)}"><button type="submit" class="secondary" aria-label="Sign out session last used ${escapeHtml(s.lastUsedAt.toISOString())}">Sign out</button></form>`;
      return `<tr><td data-label="Where">${what}</td><td data-label="IP address">${escapeHtml(s.ip ?? '')}</td><td data-label="Last used">${date(s.lastUsedAt)}</td><td>${action}</td></tr>`;
    })
    .join('\n');
  return `<section aria-labelledby="sessions-h" id="sessions">
<h2 id="sessions-h">Sessions</h2>
${errorFor(data, 'sessions')}<table>
<thead><tr><th scope="col">Where</th><th scope="col">IP address</th><th scope="col">Last used</th><th scope="col"><span class="muted">Action</span></th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
<form method="post" action="${act(data, 'sessions/revoke-others')}">
  ${csrfField(data.csrf)}
  <div class="actions"><button type="submit" class="secondary">Sign out all other sessions</button></div>
</form>
</section>`;
}

function appsSection(data: AccountPageData): string {
  const items = data.apps.length
    ? `<ul>\n${data.apps
        .map(
          (a) => `<li><strong>${escapeHtml(a.name)}</strong> <span class="muted">(${escapeHtml(a.scopes.join(' '))}; since ${date(a.grantedAt)})</span>
<form method="post" action="${act(data, 'apps/remove')}" class="inline">${csrfField(data.csrf)}<input type="hidden" name="client_id" value="${escapeHtml(a.clientId)}"><button type="submit" class="secondary" aria-label="Remove ${escapeHtml(a.name)}">Remove</button></form></li>`,
        )
        .join('\n')}\n</ul>`
    : '<p class="muted">No app has access to your account.</p>';
  return `<section aria-labelledby="apps-h" id="apps">
<h2 id="apps-h">Connected apps</h2>
${errorFor(data, 'apps')}${items}
</section>`;
}

function totpPart(data: AccountPageData): string {
  const d = describedBy(data, 'second-factors');
  if (data.totp === 'on') {
    return `<h3>Authenticator app</h3>
<p>On. Sign-ins with your password also ask for a code from the app.</p>
<details>
<summary>Remove the authenticator app</summary>
<form method="post" action="${act(data, 'totp/remove')}">
  ${csrfField(data.csrf)}
  <label for="totp_remove_code">Current code from the app</label>
  <input type="text" id="totp_remove_code" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="6"${d}>
  <p class="muted">Or, without the app:</p>
  <label for="totp_remove_password">Your password</label>
  <input type="password" id="totp_remove_password" name="password" autocomplete="current-password"${d}>
  <div class="actions"><button type="submit" class="secondary">Remove authenticator app</button></div>
</form>
</details>`;
  }
  if (data.totp === 'pending' && data.pendingTotp) {
    const p = data.pendingTotp;
    return `<h3>Authenticator app</h3>
<ol>
<li>Scan this code with your authenticator app:
<div class="qr" role="img" aria-label="QR code of the authenticator secret">${p.qrSvg}</div></li>
<li>or enter this secret by hand: <code class="secret" id="totp-secret">${escapeHtml(p.secret)}</code></li>
<li>Enter the 6-digit code the app shows:</li>
</ol>
<form method="post" action="${act(data, 'totp/confirm')}">
  ${csrfField(data.csrf)}
  <label for="totp_code">Code from the app</label>
  <input type="text" id="totp_code" name="code" inputmode="numeric" pattern="[0-9]*" maxlength="6" autocomplete="one-time-code" required${d}>
  <div class="actions"><button type="submit">Turn on</button></div>
</form>
<form method="post" action="${act(data, 'totp/remove')}">
  ${csrfField(data.csrf)}
  <div class="actions"><button type="submit" class="secondary">Cancel setup</button></div>
</form>`;
  }
  return `<h3>Authenticator app</h3>
<p class="muted">Use codes from an app such as a password manager or an authenticator on your phone.</p>
<form method="post" action="${act(data, 'totp/setup')}">
  ${csrfField(data.csrf)}
  <div class="actions"><button type="submit">Set up an authenticator app</button></div>
</form>`;
}

function recoveryPart(data: AccountPageData): string {
  const fresh = data.recoveryCodes
    ? `<div class="ok" role="status" id="recovery-codes">
<p><strong>Your recovery codes.</strong> Save them somewhere safe now: they are shown only once. Each works once if you lose your authenticator.</p>
<ol class="codes">${data.recoveryCodes.map((c) => `<li><code>${escapeHtml(c)}</code></li>`).join('')}</ol>
</div>`
    : '';
  const hasFactor = data.totp === 'on' || data.passkeys.length > 0;
  const regenerate = hasFactor
    ? `<details>
<summary>${data.recoveryCodesLeft ? 'Make new recovery codes' : 'Make recovery codes'}</summary>
<form method="post" action="${act(data, 'recovery-codes')}">
  ${csrfField(data.csrf)}
  <label for="recovery_password">Your password</label>
  <input type="password" id="recovery_password" name="password" autocomplete="current-password" required>
  <div class="actions"><button type="submit" class="secondary">Make new codes</button></div>
</form>
</details>`
    : '';
  return `<h3>Recovery codes</h3>
${fresh}<p>${data.recoveryCodesLeft} unused recovery code${data.recoveryCodesLeft === 1 ? '' : 's'} left.</p>
${regenerate}`;
}

function passkeysPart(data: AccountPageData): string {
  const list = data.passkeys.length
    ? `<ul>\n${data.passkeys
        .map(
          (p) => `<li><strong>${escapeHtml(p.name)}</strong> <span class="muted">added ${date(p.createdAt)}${p.lastUsedAt ? `, last used ${date(p.lastUsedAt)}` : ''}</span>
<form method="post" action="${act(data, 'passkeys/rename')}" class="row">${csrfField(data.csrf)}<input type="hidden" name="id" value="${escapeHtml(p.id)}">
  <div><label for="rename-${escapeHtml(p.id)}">New name for ${escapeHtml(p.name)}</label><input type="text" id="rename-${escapeHtml(p.id)}" name="name" maxlength="64" required value="${escapeHtml(p.name)}"></div>
  <button type="submit" class="secondary">Rename</button>
</form>
<form method="post" action="${act(data, 'passkeys/remove')}" class="inline">${csrfField(data.csrf)}<input type="hidden" name="id" value="${escapeHtml(p.id)}"><button type="submit" class="secondary" aria-label="Remove passkey ${escapeHtml(p.name)}">Remove</button></form></li>`,
        )
        .join('\n')}\n</ul>`
    : '<p class="muted">No passkey yet. A passkey signs you in with your device\'s screen lock, without a password.</p>';
  return `<h3>Passkeys</h3>
${list}
<form method="post" action="${act(data, 'passkeys')}" id="passkey-add-form">
  ${csrfField(data.csrf)}
  <input type="hidden" name="response" value="">
  <label for="passkey_name">Name of the new passkey</label>
  <input type="text" id="passkey_name" name="name" maxlength="64" placeholder="e.g. Laptop">
  <div class="actions"><button type="button" data-passkey-register="passkey-add-form" hidden>Add a passkey</button></div>
  <p class="error" role="alert" data-passkey-error hidden></p>
  <noscript><p class="muted">Adding a passkey needs JavaScript.</p></noscript>
</form>`;
}

/** /account (CONTRACT §10): every self-service action as a plain CSRF-protected form; only passkeys need JavaScript. */
export function renderAccountPage(data: AccountPageData): string {
  const notice = data.notice ? `<p class="ok" role="status">${escapeHtml(data.notice)}</p>` : '';
  const enrol = data.enrolRequired
    ? data.continueTo
      ? `<p class="ok" role="status">Your second factor is set up. <a href="${escapeHtml(data.continueTo)}">Continue</a></p>`
      : `<p class="error" role="alert">Your role requires a second factor. Set up an authenticator app or a passkey below to continue.</p>`
    : '';
  return renderPage({
    title: 'Your account',
    wide: true,
    scripts: PASSKEY_SCRIPTS,
    body: `<h1>Your account</h1>
<p class="muted">Signed in as <strong>${escapeHtml(data.email)}</strong>.</p>
<nav aria-label="Sections"><p><a href="#second-factors">Second factors</a> · <a href="#sessions">Sessions</a> · <a href="#apps">Connected apps</a></p></nav>
${enrol}${notice}
${profileSection(data)}
${passwordSection(data)}
<section aria-labelledby="mfa-h" id="second-factors">
<h2 id="mfa-h">Second factors and passkeys</h2>
${errorFor(data, 'second-factors')}${totpPart(data)}
${passkeysPart(data)}
${recoveryPart(data)}
</section>
${renderIdentitiesSection({
  csrf: data.csrf,
  identities: data.identities ?? [],
  available: data.linkableProviders ?? [],
  error: data.error?.section === 'identities' ? data.error.message : undefined,
  formQuery: data.formQuery,
})}
${sessionsSection(data)}
${appsSection(data)}
<section>
<form method="post" action="/logout">
  ${csrfField(data.csrf)}
  <div class="actions"><button type="submit" class="secondary">Sign out</button></div>
</form>
</section>`,
  });
}

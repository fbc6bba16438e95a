import { pageEnv } from './env';
import { Actions, FormError, Hidden } from './kit';
import { renderPage } from './layout';

/** /device (RFC 8628 §3.3): the user types the code their device shows. No JavaScript, plain form posts. */
export function renderDeviceEntryPage(options: { csrf: string; userCode?: string; userEmail: string; error?: string }): string {
  return renderPage(
    { title: 'Connect a device' },
    <>
      <h1>Connect a device</h1>
      <p class="muted">Signed in as {options.userEmail}</p>
      <FormError id="device-error" message={options.error} />
      <form method="post" action="/device" novalidate>
        <Hidden fields={{ csrf: options.csrf }} />
        <label for="user_code">Enter the code shown on your device</label>
        <input
          type="text"
          id="user_code"
          name="user_code"
          autocomplete="one-time-code"
          autocapitalize="characters"
          spellcheck={false}
          required
          autofocus
          placeholder="XXXX-XXXX"
          value={options.userCode ?? ''}
          aria-describedby={options.error ? 'device-error' : undefined}
        />
        <Actions>
          <button type="submit">Continue</button>
        </Actions>
      </form>
    </>,
  );
}

/** The request behind a code: which app, what it may do; Approve or Deny. */
export function renderDeviceConfirmPage(options: {
  csrf: string;
  userCode: string;
  clientName: string;
  scopes: Array<{ scope: string; description: string }>;
  userEmail: string;
  /** CONTRACT §13: a client that registered itself (no administrator reviewed it). */
  unreviewed?: boolean;
}): string {
  const { t } = pageEnv();
  return renderPage(
    { title: `Allow ${options.clientName}?` },
    <>
      <h1>
        <span id="client-name">{options.clientName}</span> wants to access your account
      </h1>
      <p class="muted">
        Signed in as {options.userEmail} &middot; code <strong id="user-code">{options.userCode}</strong>
      </p>
      <p>Only continue if this code is the one your device shows.</p>
      {options.unreviewed ? (
        <section class="error" id="unreviewed-app" aria-labelledby="unreviewed-title">
          <h2 id="unreviewed-title">{t.consent.unreviewedTitle}</h2>
          <p>{t.consent.unreviewedDevice}</p>
        </section>
      ) : null}
      <p id="scopes-heading">If you allow it, this device will be able to:</p>
      <ul class="scopes" aria-labelledby="scopes-heading">
        {options.scopes.map((s) => (
          <li>{s.description}</li>
        ))}
      </ul>
      <form method="post" action="/device/decide">
        <Hidden fields={{ csrf: options.csrf, user_code: options.userCode }} />
        <Actions>
          <button type="submit" name="decision" value="approve">
            Approve
          </button>
          <button type="submit" name="decision" value="deny" class="secondary">
            Deny
          </button>
        </Actions>
      </form>
    </>,
  );
}

export function renderDeviceDonePage(options: { approved: boolean; clientName: string }): string {
  const title = options.approved ? 'Device connected' : 'Request denied';
  const message = options.approved
    ? `${options.clientName} is now signed in. You can return to your device.`
    : `${options.clientName} was not given access. You can close this page.`;
  return renderPage(
    { title },
    <>
      <h1>{title}</h1>
      <p role="status" id="device-result">
        {message}
      </p>
    </>,
  );
}

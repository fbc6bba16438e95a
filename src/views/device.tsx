import { pageEnv } from './env';
import { Actions, Hidden, PageField, Submit } from './kit';
import { renderPage } from './layout';
import { Requested } from './consent';

/** /device (RFC 8628 §3.3): the user types the code their device shows. No JavaScript, plain form posts. */
export function renderDeviceEntryPage(options: { csrf: string; userCode?: string; userEmail: string; error?: string }): string {
  const { t } = pageEnv();
  return renderPage(
    { title: t.device.title, errors: { user_code: options.error } },
    <>
      <h1>{t.device.title}</h1>
      <p class="muted">{t.device.signedInAs(options.userEmail)}</p>
      <form method="post" action="/device" novalidate>
        <Hidden fields={{ csrf: options.csrf }} />
        <PageField
          name="user_code"
          label={t.device.enterCode}
          class="user-code"
          autocomplete="one-time-code"
          autocapitalize="characters"
          spellcheck={false}
          required
          autofocus
          placeholder="XXXX-XXXX"
          value={options.userCode ?? ''}
          error={options.error}
          errorId="device-error"
        />
        <Submit label={t.device.continue} />
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
  /** CONTRACT §23: the API asked for, if any. */
  resources: ReadonlyArray<{ identifier: string; name: string }>;
  userEmail: string;
  /** CONTRACT §13: a client that registered itself (no administrator reviewed it). */
  unreviewed?: boolean;
}): string {
  const { t } = pageEnv();
  return renderPage(
    { title: t.device.confirmTitle(options.clientName) },
    <>
      <h1>
        <span id="client-name">{options.clientName}</span> {t.device.wantsAccess}
      </h1>
      <p class="muted">{t.device.signedInAs(options.userEmail)}</p>
      <p>
        {t.device.code}{' '}
        <strong id="user-code" class="user-code">
          {options.userCode}
        </strong>
      </p>
      <p>{t.device.onlyIfSame}</p>
      <Requested
        unreviewed={options.unreviewed ? t.consent.unreviewedDevice : undefined}
        willBeAble={t.device.willBeAble}
        scopes={options.scopes}
        resources={options.resources}
      />
      <form method="post" action="/device/decide">
        <Hidden fields={{ csrf: options.csrf, user_code: options.userCode }} />
        <Actions>
          <button type="submit" name="decision" value="approve">
            {t.device.approve}
          </button>
          <button type="submit" name="decision" value="deny" class="secondary">
            {t.device.deny}
          </button>
        </Actions>
      </form>
    </>,
  );
}

export function renderDeviceDonePage(options: { approved: boolean; clientName: string }): string {
  const { t } = pageEnv();
  const title = options.approved ? t.device.connectedTitle : t.device.deniedTitle;
  const message = options.approved ? t.device.connected(options.clientName) : t.device.denied(options.clientName);
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

import { IdentitiesSection } from './federation';
import { Actions, CsrfField, Flash, FormError, Hidden, Time } from './kit';
import { renderPage } from './layout';
import { PASSKEY_SCRIPTS } from './login';

export type AccountSection = 'profile' | 'password' | 'sessions' | 'apps' | 'second-factors' | 'identities';

export interface AccountPageData {
  csrf: string;
  email: string;
  firstName: string;
  lastName: string;
  sessions: Array<{
    id: string;
    userAgent: string | null;
    ip: string | null;
    lastUsedAt: Date;
    clientName: string | null;
    current: boolean;
  }>;
  apps: Array<{ clientId: string; name: string; scopes: string[]; grantedAt: Date }>;
  totp: 'on' | 'pending' | 'off';
  /** While an enrolment is pending: the secret as text and its QR code (server-made SVG). */
  pendingTotp?: { secret: string; otpauthUrl: string; qrSvg: string };
  passkeys: Array<{ id: string; name: string; createdAt: Date; lastUsedAt: Date | null }>;
  recoveryCodesLeft: number;
  /** The sign-in is more than 10 minutes old: forms that add or remove a factor ask for the password (CONTRACT §11). */
  reauthenticate?: boolean;
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

type Props = { data: AccountPageData };

/** A form's action, keeping the enrolment context (?enrol=required&return_to=…) across posts. */
const act = (data: AccountPageData, path: string) => `/account/${path}${data.formQuery ?? ''}`;

function SectionError({ data, section }: Props & { section: AccountSection }) {
  return <FormError id={`${section}-error`} message={data.error?.section === section ? data.error.message : undefined} />;
}

const describedBy = (data: AccountPageData, section: AccountSection) => (data.error?.section === section ? `${section}-error` : undefined);

/**
 * The password field of a form that adds or removes a factor once the sign-in is older than 10 minutes (its `name`
 * is the API's proof field, `password`); nothing while the sign-in is recent.
 */
function ReauthField({ data, id }: Props & { id: string }) {
  if (!data.reauthenticate) return null;
  return (
    <>
      <label for={id}>Your password (you signed in more than 10 minutes ago)</label>
      <input type="password" id={id} name="password" autocomplete="current-password" required aria-describedby={describedBy(data, 'second-factors')} />
    </>
  );
}

function ProfileSection({ data }: Props) {
  const d = describedBy(data, 'profile');
  return (
    <section aria-labelledby="profile-h">
      <h2 id="profile-h">Profile</h2>
      <SectionError data={data} section="profile" />
      <form method="post" action={act(data, 'profile')}>
        <CsrfField csrf={data.csrf} />
        <label for="first_name">First name</label>
        <input
          type="text"
          id="first_name"
          name="first_name"
          autocomplete="given-name"
          maxlength={100}
          required
          value={data.firstName}
          aria-describedby={d}
        />
        <label for="last_name">Last name</label>
        <input
          type="text"
          id="last_name"
          name="last_name"
          autocomplete="family-name"
          maxlength={100}
          required
          value={data.lastName}
          aria-describedby={d}
        />
        <Actions>
          <button type="submit">Save profile</button>
        </Actions>
      </form>
    </section>
  );
}

function PasswordSection({ data }: Props) {
  const d = describedBy(data, 'password');
  return (
    <section aria-labelledby="password-h">
      <h2 id="password-h">Password</h2>
      <SectionError data={data} section="password" />
      <form method="post" action={act(data, 'password')}>
        <CsrfField csrf={data.csrf} />
        <input type="text" name="username" autocomplete="username" value={data.email} hidden />
        <label for="current_password">Current password</label>
        <input
          type="password"
          id="current_password"
          name="current_password"
          autocomplete="current-password"
          required
          aria-describedby={d}
        />
        <label for="new_password">New password</label>
        <input
          type="password"
          id="new_password"
          name="new_password"
          autocomplete="new-password"
          minlength={6}
          required
          aria-describedby={d}
        />
        <label for="new_password_confirm">New password again</label>
        <input
          type="password"
          id="new_password_confirm"
          name="new_password_confirm"
          autocomplete="new-password"
          minlength={6}
          required
          aria-describedby={d}
        />
        <p class="muted">Changing the password signs out every other session.</p>
        <Actions>
          <button type="submit">Change password</button>
        </Actions>
      </form>
    </section>
  );
}

function SessionsSection({ data }: Props) {
  return (
    <section aria-labelledby="sessions-h" id="sessions">
      <h2 id="sessions-h">Sessions</h2>
      <SectionError data={data} section="sessions" />
      <table>
        <thead>
          <tr>
            <th scope="col">Where</th>
            <th scope="col">IP address</th>
            <th scope="col">Last used</th>
            <th scope="col">
              <span class="muted">Action</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {data.sessions.map((s) => (
            <tr>
              <td data-label="Where">{s.clientName ? `App: ${s.clientName}` : (s.userAgent ?? 'Unknown browser')}</td>
              <td data-label="IP address">{s.ip ?? ''}</td>
              <td data-label="Last used">
                <Time at={s.lastUsedAt} />
              </td>
              <td>
                {s.current ? (
                  <strong>This browser</strong>
                ) : (
                  <form method="post" action={act(data, 'sessions/revoke')} class="inline">
                    <Hidden fields={{ csrf: data.csrf, session_id: s.id }} />
                    <button type="submit" class="secondary" aria-label={`Sign out session last used ${s.lastUsedAt.toISOString()}`}>
                      Sign out
                    </button>
                  </form>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <form method="post" action={act(data, 'sessions/revoke-others')}>
        <CsrfField csrf={data.csrf} />
        <Actions>
          <button type="submit" class="secondary">
            Sign out all other sessions
          </button>
        </Actions>
      </form>
    </section>
  );
}

function AppsSection({ data }: Props) {
  return (
    <section aria-labelledby="apps-h" id="apps">
      <h2 id="apps-h">Connected apps</h2>
      <SectionError data={data} section="apps" />
      {data.apps.length ? (
        <ul>
          {data.apps.map((a) => (
            <li>
              <strong>{a.name}</strong>{' '}
              <span class="muted">
                ({a.scopes.join(' ')}; since <Time at={a.grantedAt} />)
              </span>{' '}
              <form method="post" action={act(data, 'apps/remove')} class="inline">
                <Hidden fields={{ csrf: data.csrf, client_id: a.clientId }} />
                <button type="submit" class="secondary" aria-label={`Remove ${a.name}`}>
                  Remove
                </button>
              </form>
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">No app has access to your account.</p>
      )}
    </section>
  );
}

function TotpPart({ data }: Props) {
  const d = describedBy(data, 'second-factors');
  if (data.totp === 'on') {
    return (
      <>
        <h3>Authenticator app</h3>
        <p>On. Sign-ins with your password also ask for a code from the app.</p>
        <details>
          <summary>Remove the authenticator app</summary>
          <form method="post" action={act(data, 'totp/remove')}>
            <CsrfField csrf={data.csrf} />
            <label for="totp_remove_code">Current code from the app</label>
            <input
              type="text"
              id="totp_remove_code"
              name="code"
              inputmode="numeric"
              autocomplete="one-time-code"
              maxlength={6}
              aria-describedby={d}
            />
            <p class="muted">Or, without the app:</p>
            <label for="totp_remove_password">Your password</label>
            <input type="password" id="totp_remove_password" name="password" autocomplete="current-password" aria-describedby={d} />
            <Actions>
              <button type="submit" class="secondary">
                Remove authenticator app
              </button>
            </Actions>
          </form>
        </details>
      </>
    );
  }
  if (data.totp === 'pending' && data.pendingTotp) {
    const p = data.pendingTotp;
    return (
      <>
        <h3>Authenticator app</h3>
        <ol>
          <li>
            Scan this code with your authenticator app:
            {/* The SVG is made on the server by the qrcode library from the otpauth URL: markup, not user text. */}
            <div class="qr" role="img" aria-label="QR code of the authenticator secret" dangerouslySetInnerHTML={{ __html: p.qrSvg }} />
          </li>
          <li>
            or enter this secret by hand:{' '}
            <code class="secret" id="totp-secret">
              {p.secret}
            </code>
          </li>
          <li>Enter the 6-digit code the app shows:</li>
        </ol>
        <form method="post" action={act(data, 'totp/confirm')}>
          <CsrfField csrf={data.csrf} />
          <label for="totp_code">Code from the app</label>
          <input
            type="text"
            id="totp_code"
            name="code"
            inputmode="numeric"
            pattern="[0-9]*"
            maxlength={6}
            autocomplete="one-time-code"
            required
            aria-describedby={d}
          />
          <ReauthField data={data} id="totp_confirm_password" />
          <Actions>
            <button type="submit">Turn on</button>
          </Actions>
        </form>
        <form method="post" action={act(data, 'totp/remove')}>
          <CsrfField csrf={data.csrf} />
          <Actions>
            <button type="submit" class="secondary">
              Cancel setup
            </button>
          </Actions>
        </form>
      </>
    );
  }
  return (
    <>
      <h3>Authenticator app</h3>
      <p class="muted">Use codes from an app such as a password manager or an authenticator on your phone.</p>
      <form method="post" action={act(data, 'totp/setup')}>
        <CsrfField csrf={data.csrf} />
        <ReauthField data={data} id="totp_setup_password" />
        <Actions>
          <button type="submit">Set up an authenticator app</button>
        </Actions>
      </form>
    </>
  );
}

function RecoveryPart({ data }: Props) {
  const hasFactor = data.totp === 'on' || data.passkeys.length > 0;
  return (
    <>
      <h3>Recovery codes</h3>
      {data.recoveryCodes ? (
        <div class="ok" role="status" id="recovery-codes">
          <p>
            <strong>Your recovery codes.</strong> Save them somewhere safe now: they are shown only once. Each works once if you lose your
            authenticator.
          </p>
          <ol class="codes">
            {data.recoveryCodes.map((c) => (
              <li>
                <code>{c}</code>
              </li>
            ))}
          </ol>
        </div>
      ) : null}
      <p>
        {data.recoveryCodesLeft} unused recovery code{data.recoveryCodesLeft === 1 ? '' : 's'} left.
      </p>
      {hasFactor ? (
        <details>
          <summary>{data.recoveryCodesLeft ? 'Make new recovery codes' : 'Make recovery codes'}</summary>
          <form method="post" action={act(data, 'recovery-codes')}>
            <CsrfField csrf={data.csrf} />
            <label for="recovery_password">Your password</label>
            <input type="password" id="recovery_password" name="password" autocomplete="current-password" />
            <p class="muted">Or, instead of the password:</p>
            <label for="recovery_code_proof">Current code from the authenticator app</label>
            <input type="text" id="recovery_code_proof" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength={6} />
            <Actions>
              <button type="submit" class="secondary">
                Make new codes
              </button>
            </Actions>
          </form>
        </details>
      ) : null}
    </>
  );
}

function PasskeysPart({ data }: Props) {
  return (
    <>
      <h3>Passkeys</h3>
      {data.passkeys.length ? (
        <ul>
          {data.passkeys.map((p) => (
            <li>
              <strong>{p.name}</strong>{' '}
              <span class="muted">
                added <Time at={p.createdAt} />
                {p.lastUsedAt ? (
                  <>
                    , last used <Time at={p.lastUsedAt} />
                  </>
                ) : null}
              </span>
              <form method="post" action={act(data, 'passkeys/rename')} class="row">
                <Hidden fields={{ csrf: data.csrf, id: p.id }} />
                <div>
                  <label for={`rename-${p.id}`}>New name for {p.name}</label>
                  <input type="text" id={`rename-${p.id}`} name="name" maxlength={64} required value={p.name} />
                </div>
                <button type="submit" class="secondary">
                  Rename
                </button>
              </form>
              <form method="post" action={act(data, 'passkeys/remove')} class="inline">
                <Hidden fields={{ csrf: data.csrf, id: p.id }} />
                <ReauthField data={data} id={`remove-password-${p.id}`} />
                <button type="submit" class="secondary" aria-label={`Remove passkey ${p.name}`}>
                  Remove
                </button>
              </form>
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">No passkey yet. A passkey signs you in with your device's screen lock, without a password.</p>
      )}
      <form method="post" action={act(data, 'passkeys')} id="passkey-add-form">
        <Hidden fields={{ csrf: data.csrf, response: '' }} />
        <label for="passkey_name">Name of the new passkey</label>
        <input type="text" id="passkey_name" name="name" maxlength={64} placeholder="e.g. Laptop" />
        <ReauthField data={data} id="passkey_add_password" />
        <Actions>
          <button type="button" data-passkey-register="passkey-add-form" hidden>
            Add a passkey
          </button>
        </Actions>
        <p class="error" role="alert" data-passkey-error="" hidden></p>
        <noscript>
          <p class="muted">Adding a passkey needs JavaScript.</p>
        </noscript>
      </form>
    </>
  );
}

/** /account (CONTRACT §10): every self-service action as a plain CSRF-protected form; only passkeys need JavaScript. */
export function renderAccountPage(data: AccountPageData): string {
  return renderPage(
    { title: 'Your account', wide: true, scripts: PASSKEY_SCRIPTS },
    <>
      <h1>Your account</h1>
      <p class="muted">
        Signed in as <strong>{data.email}</strong>.
      </p>
      <nav aria-label="Sections">
        <p>
          <a href="#second-factors">Second factors</a> · <a href="#sessions">Sessions</a> · <a href="#apps">Connected apps</a>
        </p>
      </nav>
      {data.enrolRequired ? (
        data.continueTo ? (
          <p class="ok" role="status">
            Your second factor is set up. <a href={data.continueTo}>Continue</a>
          </p>
        ) : (
          <p class="error" role="alert">
            Your role requires a second factor. Set up an authenticator app or a passkey below to continue.
          </p>
        )
      ) : null}
      <Flash message={data.notice} />
      <ProfileSection data={data} />
      <PasswordSection data={data} />
      <section aria-labelledby="mfa-h" id="second-factors">
        <h2 id="mfa-h">Second factors and passkeys</h2>
        <SectionError data={data} section="second-factors" />
        <TotpPart data={data} />
        <PasskeysPart data={data} />
        <RecoveryPart data={data} />
      </section>
      <IdentitiesSection
        csrf={data.csrf}
        identities={data.identities ?? []}
        available={data.linkableProviders ?? []}
        error={data.error?.section === 'identities' ? data.error.message : undefined}
        formQuery={data.formQuery}
      />
      <SessionsSection data={data} />
      <AppsSection data={data} />
      <section>
        <form method="post" action="/logout">
          <CsrfField csrf={data.csrf} />
          <Actions>
            <button type="submit" class="secondary">
              Sign out
            </button>
          </Actions>
        </form>
      </section>
    </>,
  );
}

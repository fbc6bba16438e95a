import type { ComponentChildren, InputHTMLAttributes } from 'preact';
import { IdentitiesSection } from './federation';
import { pageEnv } from './env';
import { ONE_TIME_CODE, Actions, CsrfField, FieldMessage, Flash, Hidden, PasskeyError, Time, formatTime } from './kit';
import { renderPage } from './layout';
import { PASSKEY_SCRIPTS } from './login';

const tr = () => pageEnv().t.accountPage;

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
  /** SAML applications the person signed in to, each with its IdP-initiated sign-in link (CONTRACT §19). */
  samlApps: Array<{ name: string; signInUrl: string; lastSignInAt: Date }>;
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
  /** An unconfirmed address gets "send the confirmation email again" (CONTRACT §15). */
  emailVerified: boolean;
  /** false: the person signs in without a password; the section offers a set-password link by email instead. */
  hasPassword?: boolean;
  /** A refused form: its section, the message, and the input (by id) it is about, which the error summary links to. */
  error?: { section: AccountSection; message: string; field?: string };
  /** What a refused form kept as entered (names; never a password or a code). */
  values?: Record<string, string>;
  /** MFA_REQUIRED_FOR_ADMINS sent this person here; `continueTo` once they may go on. */
  enrolRequired?: boolean;
  continueTo?: string;
  /** Query string kept on every form's action (the enrolment context). */
  formQuery?: string;
  /** CONTRACT §16: linked identities of other providers, and the enabled providers not linked yet. */
  identities?: Array<{ id: string; providerName: string; email: string | null; createdAt: Date; confirmSlug?: string }>;
  linkableProviders?: Array<{ name: string; slug: string }>;
}

type Props = { data: AccountPageData };

/** A form's action, keeping the enrolment context (?enrol=required&return_to=…) across posts. */
const act = (data: AccountPageData, path: string) => `/account/${path}${data.formQuery ?? ''}`;

/** One section of the page: the heading it is labelled by, and a refusal about it as a whole at its top. */
function Section({
  data,
  section,
  id,
  headingId = `${section}-h`,
  heading,
  children,
}: Props & { section: AccountSection; id?: string; headingId?: string; heading: string; children: ComponentChildren }) {
  return (
    <section aria-labelledby={headingId} id={id}>
      <h2 id={headingId}>{heading}</h2>
      <SectionError data={data} section={section} />
      {children}
    </section>
  );
}

/** A form that posts one action with one button: the CSRF field, what the action needs (children), the button. */
function ButtonForm(props: { action: string; csrf: string; label: string; secondary?: boolean; children?: ComponentChildren }) {
  return (
    <form method="post" action={props.action}>
      <CsrfField csrf={props.csrf} />
      {props.children}
      <Actions>
        <button type="submit" class={props.secondary ? 'secondary' : undefined}>
          {props.label}
        </button>
      </Actions>
    </form>
  );
}

/** A row's own action (sign out this session, remove this app or passkey): its hidden fields and one button named for it. */
function RowAction(props: { action: string; fields: Record<string, string>; label: string; name: string; children?: ComponentChildren }) {
  return (
    <form method="post" action={props.action} class="inline">
      <Hidden fields={props.fields} />
      {props.children}
      <button type="submit" class="secondary" aria-label={props.name}>
        {props.label}
      </button>
    </form>
  );
}

/** A refusal about the section as a whole (a stale session, a provider), at the section's top. */
function SectionError({ data, section }: Props & { section: AccountSection }) {
  const shown = data.error?.section === section && data.error.field === undefined;
  return <FieldMessage id={`${section}-error`} message={shown ? data.error?.message : undefined} />;
}

/** A refusal about one input, right below it (CONTRACT §18); the id is the section's, which its inputs name. */
function Beside({ data, id }: Props & { id: string }) {
  const e = data.error;
  return <FieldMessage id={`${e?.section ?? ''}-error`} message={e?.field === id ? e.message : undefined} />;
}

/** aria-invalid on the input a refusal is about. */
const invalidFor = (data: AccountPageData, id: string) => (data.error?.field === id ? { 'aria-invalid': 'true' as const } : {});

const describedBy = (data: AccountPageData, section: AccountSection) => (data.error?.section === section ? `${section}-error` : undefined);

/** A labelled input a refusal can be about: aria-invalid on it, and the message right below it. */
function Field({ data, id, label, type = 'text', ...input }: Props & { id: string; label: string } & InputHTMLAttributes) {
  return (
    <>
      <label for={id}>{label}</label>
      <input type={type} id={id} {...invalidFor(data, id)} {...input} />
      <Beside data={data} id={id} />
    </>
  );
}

/**
 * The password field of a form that adds or removes a factor once the sign-in is older than 10 minutes (its `name`
 * is the API's proof field, `password`); nothing while the sign-in is recent.
 */
function ReauthField({ data, id }: Props & { id: string }) {
  if (!data.reauthenticate) return null;
  return (
    <>
      <label for={id}>{pageEnv().t.accountExtra.reauthLabel}</label>
      <input
        type="password"
        id={id}
        name="password"
        autocomplete="current-password"
        required
        aria-describedby={describedBy(data, 'second-factors')}
      />
    </>
  );
}

function ProfileSection({ data }: Props) {
  const d = describedBy(data, 'profile');
  return (
    <Section data={data} section="profile" heading={tr().profile}>
      <ButtonForm action={act(data, 'profile')} csrf={data.csrf} label={tr().saveProfile}>
        <Field
          data={data}
          id="first_name"
          label={pageEnv().t.common.firstName}
          name="first_name"
          autocomplete="given-name"
          maxlength={100}
          required
          value={data.values?.first_name ?? data.firstName}
          aria-describedby={d}
        />
        <Field
          data={data}
          id="last_name"
          label={pageEnv().t.common.lastName}
          name="last_name"
          autocomplete="family-name"
          maxlength={100}
          required
          value={data.values?.last_name ?? data.lastName}
          aria-describedby={d}
        />
      </ButtonForm>
    </Section>
  );
}

function PasswordSection({ data }: Props) {
  const d = describedBy(data, 'password');
  return (
    <Section data={data} section="password" heading={tr().password}>
      {data.hasPassword === false ? (
        // No current password to ask for: the set-password link by email, as "forgot password" sends it.
        <ButtonForm action="/forgot-password" csrf={data.csrf} label={tr().setPassword}>
          <Hidden fields={{ email: data.email }} />
          <p>{tr().noPassword}</p>
        </ButtonForm>
      ) : (
        <ButtonForm action={act(data, 'password')} csrf={data.csrf} label={tr().changePassword}>
          <input type="text" name="username" autocomplete="username" value={data.email} hidden />
          <Field
            data={data}
            id="current_password"
            type="password"
            label={tr().currentPassword}
            name="current_password"
            autocomplete="current-password"
            required
            aria-describedby={d}
          />
          <Field
            data={data}
            id="new_password"
            type="password"
            label={pageEnv().t.common.newPassword}
            name="new_password"
            autocomplete="new-password"
            minlength={6}
            required
            aria-describedby={d}
          />
          <Field
            data={data}
            id="new_password_confirm"
            type="password"
            label={tr().newPasswordAgain}
            name="new_password_confirm"
            autocomplete="new-password"
            minlength={6}
            required
            aria-describedby={d}
          />
          <p class="muted">{tr().passwordSignsOut}</p>
        </ButtonForm>
      )}
    </Section>
  );
}

function SessionsSection({ data }: Props) {
  return (
    <Section data={data} section="sessions" id="sessions" heading={tr().sessions}>
      <table>
        <thead>
          <tr>
            <th scope="col">{tr().where}</th>
            <th scope="col">{tr().ipAddress}</th>
            <th scope="col">{tr().lastUsed}</th>
            <th scope="col">
              <span class="muted">{tr().action}</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {data.sessions.map((s) => (
            <tr>
              <td data-label={tr().where}>{s.clientName ? `App: ${s.clientName}` : (s.userAgent ?? tr().unknownBrowser)}</td>
              <td data-label={tr().ipAddress} class="nowrap">
                {s.ip ?? ''}
              </td>
              <td data-label={tr().lastUsed}>
                <Time at={s.lastUsedAt} />
              </td>
              <td>
                {s.current ? (
                  <strong>{tr().thisBrowser}</strong>
                ) : (
                  <RowAction
                    action={act(data, 'sessions/revoke')}
                    fields={{ csrf: data.csrf, session_id: s.id }}
                    label={tr().signOut}
                    name={tr().signOutSession(formatTime(s.lastUsedAt))}
                  />
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <ButtonForm action={act(data, 'sessions/revoke-others')} csrf={data.csrf} label={tr().signOutOthers} secondary />
    </Section>
  );
}

function AppsSection({ data }: Props) {
  return (
    <Section data={data} section="apps" id="apps" heading={tr().connectedApps}>
      {data.apps.length ? (
        <ul>
          {data.apps.map((a) => (
            <li>
              <strong>{a.name}</strong>{' '}
              <span class="muted">
                ({a.scopes.join(' ')}; {tr().since} <Time at={a.grantedAt} />)
              </span>{' '}
              <RowAction
                action={act(data, 'apps/remove')}
                fields={{ csrf: data.csrf, client_id: a.clientId }}
                label={tr().remove}
                name={tr().removeNamed(a.name)}
              />
            </li>
          ))}
        </ul>
      ) : data.samlApps.length ? null : (
        <p class="muted">{tr().noApps}</p>
      )}
      {data.samlApps.length > 0 && (
        <>
          <h3>{tr().samlApps}</h3>
          <ul>
            {data.samlApps.map((a) => (
              <li>
                <strong>{a.name}</strong>{' '}
                <span class="muted">
                  ({tr().lastSignIn} <Time at={a.lastSignInAt} />)
                </span>{' '}
                <a href={a.signInUrl} aria-label={tr().openNamed(a.name)}>
                  {tr().open}
                </a>
              </li>
            ))}
          </ul>
        </>
      )}
    </Section>
  );
}

function TotpPart({ data }: Props) {
  const d = describedBy(data, 'second-factors');
  if (data.totp === 'on') {
    return (
      <>
        <h3>{tr().authenticatorApp}</h3>
        <p>{tr().totpOn}</p>
        <details>
          <summary>{tr().removeTotpSummary}</summary>
          <ButtonForm action={act(data, 'totp/remove')} csrf={data.csrf} label={tr().removeTotp} secondary>
            <Field
              data={data}
              id="totp_remove_code"
              label={tr().currentCode}
              name="code"
              inputmode="numeric"
              autocomplete="one-time-code"
              maxlength={6}
              aria-describedby={d}
            />
            <p class="muted">{tr().orWithoutApp}</p>
            <label for="totp_remove_password">{tr().yourPassword}</label>
            <input type="password" id="totp_remove_password" name="password" autocomplete="current-password" aria-describedby={d} />
          </ButtonForm>
        </details>
      </>
    );
  }
  if (data.totp === 'pending' && data.pendingTotp) {
    const p = data.pendingTotp;
    return (
      <>
        <h3>{tr().authenticatorApp}</h3>
        <ol>
          <li>
            {tr().scan}
            {/* The SVG is made on the server by the qrcode library from the otpauth URL: markup, not user text. */}
            <div class="qr" role="img" aria-label={tr().qrLabel} dangerouslySetInnerHTML={{ __html: p.qrSvg }} />
          </li>
          <li>
            {tr().byHand}{' '}
            <code class="secret" id="totp-secret">
              {p.secret}
            </code>
          </li>
          <li>{tr().enterDigits}</li>
        </ol>
        <ButtonForm action={act(data, 'totp/confirm')} csrf={data.csrf} label={tr().turnOn}>
          <Field data={data} id="totp_code" label={tr().codeFromApp} name="code" {...ONE_TIME_CODE} required aria-describedby={d} />
          <ReauthField data={data} id="totp_confirm_password" />
        </ButtonForm>
        <ButtonForm action={act(data, 'totp/remove')} csrf={data.csrf} label={tr().cancelSetup} secondary />
      </>
    );
  }
  return (
    <>
      <h3>{tr().authenticatorApp}</h3>
      <p class="muted">{tr().totpHint}</p>
      <ButtonForm action={act(data, 'totp/setup')} csrf={data.csrf} label={tr().setUpTotp}>
        <ReauthField data={data} id="totp_setup_password" />
      </ButtonForm>
    </>
  );
}

function RecoveryPart({ data }: Props) {
  const hasFactor = data.totp === 'on' || data.passkeys.length > 0;
  return (
    <>
      <h3>{tr().recoveryCodes}</h3>
      <p>{pageEnv().t.recovery.left(data.recoveryCodesLeft)}</p>
      {hasFactor ? (
        <details>
          <summary>{data.recoveryCodesLeft ? tr().makeNewRecovery : tr().makeRecovery}</summary>
          <ButtonForm action={act(data, 'recovery-codes')} csrf={data.csrf} label={tr().makeNewCodes} secondary>
            <Field
              data={data}
              id="recovery_password"
              type="password"
              label={tr().yourPassword}
              name="password"
              autocomplete="current-password"
              aria-describedby={describedBy(data, 'second-factors')}
            />
            <p class="muted">{pageEnv().t.accountExtra.orInsteadOfPassword}</p>
            <label for="recovery_code_proof">{pageEnv().t.accountExtra.currentTotpCode}</label>
            <input type="text" id="recovery_code_proof" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength={6} />
          </ButtonForm>
        </details>
      ) : null}
    </>
  );
}

function PasskeysPart({ data }: Props) {
  return (
    <>
      <h3>{tr().passkeys}</h3>
      {data.passkeys.length ? (
        <ul>
          {data.passkeys.map((p) => (
            <li>
              <strong>{p.name}</strong>{' '}
              <span class="muted">
                {tr().added} <Time at={p.createdAt} />
                {p.lastUsedAt ? (
                  <>
                    , {tr().lastUsedLower} <Time at={p.lastUsedAt} />
                  </>
                ) : null}
              </span>
              <form method="post" action={act(data, 'passkeys/rename')} class="row">
                <Hidden fields={{ csrf: data.csrf, id: p.id }} />
                <div>
                  <label for={`rename-${p.id}`}>{tr().newNameFor(p.name)}</label>
                  <input
                    type="text"
                    id={`rename-${p.id}`}
                    {...invalidFor(data, `rename-${p.id}`)}
                    name="name"
                    maxlength={64}
                    required
                    value={p.name}
                    aria-describedby={data.error?.field === `rename-${p.id}` ? 'second-factors-error' : undefined}
                  />
                  <Beside data={data} id={`rename-${p.id}`} />
                </div>
                <button type="submit" class="secondary">
                  {tr().rename}
                </button>
              </form>
              <RowAction
                action={act(data, 'passkeys/remove')}
                fields={{ csrf: data.csrf, id: p.id }}
                label={tr().remove}
                name={tr().removePasskey(p.name)}
              >
                <ReauthField data={data} id={`remove-password-${p.id}`} />
              </RowAction>
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">{tr().noPasskey}</p>
      )}
      <form method="post" action={act(data, 'passkeys')} id="passkey-add-form">
        <Hidden fields={{ csrf: data.csrf, response: '' }} />
        <Field
          data={data}
          id="passkey_name"
          label={tr().passkeyName}
          name="name"
          maxlength={64}
          placeholder={tr().passkeyPlaceholder}
          aria-describedby={describedBy(data, 'second-factors')}
        />
        <ReauthField data={data} id="passkey_add_password" />
        <Actions>
          <button type="button" data-passkey-register="passkey-add-form" hidden>
            {tr().addPasskey}
          </button>
        </Actions>
        <PasskeyError />
        <noscript>
          <p class="muted">{tr().passkeyNeedsJs}</p>
        </noscript>
      </form>
    </>
  );
}

export const RECOVERY_CODES_SCRIPT = '/static/recovery-codes.js';

/**
 * Freshly made recovery codes (CONTRACT §15), first thing on the page: focused on load (autofocus on the tabindex -1
 * region, and the page script), the intro announced, the codes readable and selectable without JavaScript, a
 * download that is a data: link (no script needed), a copy button the script turns on, and "I have saved them",
 * which leaves the page so the codes are not left on screen.
 */
function RecoveryCodesPanel({ codes, email }: { codes: string[]; email: string }) {
  const { t, brand } = pageEnv();
  const file = `${t.recovery.fileHeader(brand.name, email)}\n${t.recovery.fileNote}\n\n${codes.join('\n')}\n`;
  const fileName = `${brand.name.replace(/[^A-Za-z0-9._-]+/g, '-')}-recovery-codes.txt`;
  return (
    <section class="codes-panel" id="recovery-codes" tabindex={-1} autofocus aria-labelledby="recovery-codes-h" data-recovery-codes="">
      <h2 id="recovery-codes-h">{t.recovery.heading}</h2>
      <p role="status">{t.recovery.intro}</p>
      <ol class="codes" id="recovery-codes-list">
        {codes.map((c) => (
          <li>
            <code>{c}</code>
          </li>
        ))}
      </ol>
      <Actions>
        <button
          type="button"
          class="secondary"
          data-copy-codes={codes.join('\n')}
          data-copied={t.recovery.copied}
          data-copy-failed={t.recovery.copyFailed}
          hidden
        >
          {t.recovery.copy}
        </button>
        <a
          class="button secondary"
          href={`data:text/plain;charset=utf-8,${encodeURIComponent(file)}`}
          download={fileName}
          id="download-codes"
        >
          {t.recovery.download}
        </a>
        <a class="button" href="/account#second-factors" id="codes-saved">
          {t.recovery.saved}
        </a>
      </Actions>
      <p class="muted" aria-live="polite" data-copy-status=""></p>
    </section>
  );
}

function VerificationNotice({ data }: Props) {
  const { t } = pageEnv();
  if (data.emailVerified) return null;
  return (
    <section aria-labelledby="verify-h" id="verify-email">
      <h2 id="verify-h">{t.verify.title}</h2>
      <p>{t.account.unverified(data.email)}</p>
      <p class="muted">{t.account.unverifiedWhy}</p>
      <ButtonForm action={act(data, 'verification/resend')} csrf={data.csrf} label={t.account.resend} secondary />
    </section>
  );
}

/** /account (CONTRACT §10): every self-service action as a plain CSRF-protected form; only passkeys need JavaScript. */
export function renderAccountPage(data: AccountPageData): string {
  return renderPage(
    {
      title: tr().title,
      wide: true,
      scripts: data.recoveryCodes ? [...PASSKEY_SCRIPTS, RECOVERY_CODES_SCRIPT] : PASSKEY_SCRIPTS,
      errors: data.error ? { [data.error.field ?? '_form']: data.error.message } : undefined,
    },
    <>
      {data.recoveryCodes ? <RecoveryCodesPanel codes={data.recoveryCodes} email={data.email} /> : null}
      <h1>{tr().title}</h1>
      <p class="muted">
        {tr().signedInAs} <strong>{data.email}</strong>.
      </p>
      <nav aria-label={tr().sectionsLabel}>
        <p>
          <a href="#second-factors">{tr().secondFactors}</a> · <a href="#sessions">{tr().sessions}</a> ·{' '}
          <a href="#apps">{tr().connectedApps}</a>
        </p>
      </nav>
      {data.enrolRequired ? (
        data.continueTo ? (
          <p class="ok" role="status">
            {tr().factorSetUp} <a href={data.continueTo}>{tr().continue}</a>
          </p>
        ) : (
          <p class="error" role="alert">
            {tr().roleRequires}
          </p>
        )
      ) : null}
      <Flash message={data.notice} />
      <VerificationNotice data={data} />
      <ProfileSection data={data} />
      <PasswordSection data={data} />
      <Section data={data} section="second-factors" id="second-factors" headingId="mfa-h" heading={tr().secondFactorsAndPasskeys}>
        <TotpPart data={data} />
        <PasskeysPart data={data} />
        <RecoveryPart data={data} />
      </Section>
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
        <ButtonForm action="/logout" csrf={data.csrf} label={tr().signOut} secondary />
      </section>
    </>,
  );
}

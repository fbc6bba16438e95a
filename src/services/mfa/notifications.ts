import type { Messages } from '../../i18n';
import { mailEnv, renderMailHtml } from '../../views/mail';
import type { ServiceContext } from '../context';

interface MailUser {
  email: string;
  firstName: string;
}

/**
 * Every factor added or removed, and every recovery code used, is mailed to the account (CONTRACT §10): the owner
 * learns at once when someone else changed how the account signs in.
 */
function notify(ctx: ServiceContext, user: MailUser, subject: (t: Messages) => string, what: (t: Messages) => string): void {
  const { t, brand } = mailEnv(ctx);
  const hello = user.firstName ? t.mail.helloName(user.firstName) : t.mail.hello;
  const outro = t.mail.notOwnerOutro(`${ctx.config.baseUrl}/account`);
  const footer = t.mail.footer(brand.name, ctx.config.baseUrl);
  ctx.mailer.send({
    to: user.email,
    subject: subject(t),
    text: `${hello}\n\n${what(t)}\n\n${outro}\n\n-- \n${footer}\n`,
    html: renderMailHtml([hello, what(t), outro], { brand, footer }),
  });
}

export function mailFactorAdded(ctx: ServiceContext, user: MailUser, factor: string): void {
  notify(
    ctx,
    user,
    (t) => t.mail.factorAddedSubject,
    (t) => t.mail.factorAdded(factor),
  );
}

export function mailFactorRemoved(ctx: ServiceContext, user: MailUser, factor: string): void {
  notify(
    ctx,
    user,
    (t) => t.mail.factorRemovedSubject,
    (t) => t.mail.factorRemoved(factor),
  );
}

export function mailRecoveryCodeUsed(ctx: ServiceContext, user: MailUser, left: number): void {
  notify(
    ctx,
    user,
    (t) => t.mail.recoveryUsedSubject,
    (t) => t.mail.recoveryUsed(left),
  );
}

const RESET_CAUSE = {
  set_password_link:
    'A password was chosen for your account through a link sent to this address, before the address had ever been confirmed.',
  create_admin: "An operator made your account an administrator with the server's command line and set its password.",
  admin: 'An administrator reset the second factors of your account.',
} as const;

/**
 * CONTRACT §11: taking an account back (or an administrator's reset) removed every second factor; the owner is told
 * what went and why, so that a factor planted by someone else is known to be gone, and a lost one can be set up again.
 */
export function mailFactorsReset(
  ctx: ServiceContext,
  user: MailUser,
  removed: { passkeys: number; totp: boolean; recoveryCodes: number },
  via: keyof typeof RESET_CAUSE,
): void {
  const what: string[] = [];
  if (removed.passkeys > 0) what.push(`${removed.passkeys} passkey${removed.passkeys === 1 ? '' : 's'}`);
  if (removed.totp) what.push('the authenticator app');
  if (removed.recoveryCodes > 0) what.push('the recovery codes');
  notify(
    ctx,
    user,
    // Not translated yet (arrived from main after issue 24's catalogues were written).
    () => 'The second factors of your account were removed',
    () =>
      `${RESET_CAUSE[via]} Every second factor of the account was removed with it (${what.join(', ')}), and its sessions may have been ` +
      'signed out. Set up a passkey or an authenticator app again on your account page.',
  );
}

export function mailRecoveryCodesRegenerated(ctx: ServiceContext, user: MailUser): void {
  notify(
    ctx,
    user,
    (t) => t.mail.recoveryRegeneratedSubject,
    (t) => t.mail.recoveryRegenerated,
  );
}

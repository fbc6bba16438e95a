import { renderMailHtml } from '../../views/mail';
import type { ServiceContext } from '../context';

interface MailUser {
  email: string;
  firstName: string;
}

/**
 * Every factor added or removed, and every recovery code used, is mailed to the account (CONTRACT §10): the owner
 * learns at once when someone else changed how the account signs in.
 */
function notify(ctx: ServiceContext, user: MailUser, subject: string, what: string): void {
  const hello = `Hello ${user.firstName || 'there'},`;
  const outro = `If this was not you, sign in, review your second factors and sessions at ${ctx.config.baseUrl}/account, and change your password.`;
  ctx.mailer.send({
    to: user.email,
    subject,
    text: `${hello}\n\n${what}\n\n${outro}\n`,
    html: renderMailHtml([hello, what, outro]),
  });
}

export function mailFactorAdded(ctx: ServiceContext, user: MailUser, factor: string): void {
  notify(ctx, user, 'A sign-in method was added to your account', `${factor} was added to your account as a way to sign in.`);
}

export function mailFactorRemoved(ctx: ServiceContext, user: MailUser, factor: string): void {
  notify(ctx, user, 'A sign-in method was removed from your account', `${factor} was removed from your account.`);
}

export function mailRecoveryCodeUsed(ctx: ServiceContext, user: MailUser, left: number): void {
  notify(
    ctx,
    user,
    'A recovery code was used to sign in',
    `A recovery code was just used to sign in to your account. ${left} unused recovery code${left === 1 ? '' : 's'} left.`,
  );
}

const RESET_CAUSE = {
  set_password_link:
    'A password was chosen for your account through a link sent to this address, before the address had ever been confirmed.',
  create_admin: 'An operator made your account an administrator with the server\'s command line and set its password.',
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
    'The second factors of your account were removed',
    `${RESET_CAUSE[via]} Every second factor of the account was removed with it (${what.join(', ')}), and its sessions may have been ` +
      'signed out. Set up a passkey or an authenticator app again on your account page.',
  );
}

export function mailRecoveryCodesRegenerated(ctx: ServiceContext, user: MailUser): void {
  notify(
    ctx,
    user,
    'New recovery codes were generated',
    'New recovery codes were generated for your account; the old ones no longer work.',
  );
}

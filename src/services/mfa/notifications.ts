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

export function mailRecoveryCodesRegenerated(ctx: ServiceContext, user: MailUser): void {
  notify(ctx, user, 'New recovery codes were generated', 'New recovery codes were generated for your account; the old ones no longer work.');
}

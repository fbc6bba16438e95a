import type { Messages } from '../../i18n';
import { mailEnv } from '../mail';
import type { ServiceContext } from '../context';

interface MailUser {
  email: string;
  firstName: string;
}

/**
 * Every factor added or removed, and every recovery code used, is mailed to the account (CONTRACT §10): the owner
 * learns at once when someone else changed how the account signs in.
 */
function notify(ctx: ServiceContext, user: MailUser, subject: (t: Messages) => string, what: (t: Messages) => string | string[]): void {
  const { t, brand } = mailEnv(ctx);
  const hello = user.firstName ? t.mail.helloName(user.firstName) : t.mail.hello;
  const outro = t.mail.notOwnerOutro(`${ctx.config.baseUrl}/account`);
  const footer = t.mail.footer(brand.name, ctx.config.baseUrl);
  const body = [what(t)].flat();
  ctx.mailer.send({
    to: user.email,
    subject: subject(t),
    text: `${hello}\n\n${body.join('\n\n')}\n\n${outro}\n\n-- \n${footer}\n`,
    html: ctx.mailHtml([hello, ...body, outro], { brand, footer }),
  });
}

/** Which factor a notification is about, said in the mail's language. */
export type FactorName = { kind: 'passkey'; name: string } | { kind: 'totp' };

const factorName = (t: Messages, factor: FactorName) =>
  factor.kind === 'passkey' ? t.mailExtra.aPasskey(factor.name) : t.mailExtra.anAuthenticatorApp;

/** A notice of one change: its subject, and its body from what the caller says changed. */
const notice =
  <A>(subject: (t: Messages) => string, what: (t: Messages, about: A) => string) =>
  (ctx: ServiceContext, user: MailUser, about: A): void =>
    notify(ctx, user, subject, (t) => what(t, about));

export const mailFactorAdded = notice<FactorName>(
  (t) => t.mail.factorAddedSubject,
  (t, factor) => t.mail.factorAdded(factorName(t, factor)),
);
export const mailFactorRemoved = notice<FactorName>(
  (t) => t.mail.factorRemovedSubject,
  (t, factor) => t.mail.factorRemoved(factorName(t, factor)),
);
export const mailRecoveryCodeUsed = notice<number>(
  (t) => t.mail.recoveryUsedSubject,
  (t, left) => t.mail.recoveryUsed(left),
);

/**
 * CONTRACT §11, §23: taking an account back (or an administrator's reset) removed every second factor and every
 * linked identity; the owner is told what went and why, so that a factor or an upstream sign-in planted by someone
 * else is known to be gone, and a lost one can be set up again.
 */
export function mailFactorsReset(
  ctx: ServiceContext,
  user: MailUser,
  removed: { passkeys: number; totp: boolean; recoveryCodes: number; identities: readonly string[] },
  via: keyof Messages['mailExtra']['resetCause'],
): void {
  const { locale } = mailEnv(ctx);
  const list = (parts: string[]) => new Intl.ListFormat(locale, { type: 'conjunction' }).format(parts);
  const factors = (t: Messages): string[] => {
    const parts: string[] = [];
    if (removed.passkeys > 0) parts.push(t.mailExtra.removedPasskeys(removed.passkeys));
    if (removed.totp) parts.push(t.mailExtra.removedTotp);
    if (removed.recoveryCodes > 0) parts.push(t.mailExtra.removedRecoveryCodes);
    return parts;
  };
  const anyFactor = removed.passkeys > 0 || removed.totp || removed.recoveryCodes > 0;
  notify(
    ctx,
    user,
    (t) => (anyFactor ? t.mailExtra.factorsResetSubject : t.mailFederation.identitiesRemovedSubject),
    (t) => [
      anyFactor ? t.mailExtra.factorsReset(t.mailExtra.resetCause[via], list(factors(t))) : t.mailExtra.resetCause[via],
      ...(removed.identities.length > 0 ? [t.mailFederation.identitiesRemoved(list([...removed.identities]))] : []),
    ],
  );
}

/** CONTRACT §23: every new link of an upstream identity is mailed to the account's address. */
export function mailIdentityLinked(ctx: ServiceContext, user: MailUser, providerName: string): void {
  notify(
    ctx,
    user,
    (t) => t.mailFederation.linkedSubject(providerName),
    (t) => t.mailFederation.linked(providerName),
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

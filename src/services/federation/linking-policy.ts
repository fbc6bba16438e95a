/**
 * CONTRACT §16 linking rules as pure functions (docs/federation.md): what an upstream sign-in does with the identity
 * (provider, subject) it proved, and whether an identity may be unlinked. No database: the sign-in service loads the
 * facts, asks here, and carries out the decision; test/unit/linking-policy.test.ts checks every rule as a table.
 */

/** What the callback knows when it decides. */
export interface LinkingFacts {
  /** The account (provider, subject) is already linked to, if any. */
  linkedUser?: { id: string; isActive: boolean };
  /** The account whose email equals the asserted email (case-insensitively), if any. */
  emailUser?: { id: string; isActive: boolean };
  /** The asserted email, trimmed and lower-cased; undefined when the provider asserted none. */
  email?: string;
  /** The provider asserted `email_verified: true` (GitHub: the address is verified there). */
  emailVerified: boolean;
  provider: { trustEmail: boolean; allowSignup: boolean };
  /** REGISTRATION=open (CONTRACT §15). */
  registrationOpen: boolean;
  /** The flow was started from /account by this signed-in user, to link the identity to them. */
  linkToUserId?: string;
}

export type LinkingDecision =
  /** A known identity: its user signs in. */
  | { action: 'sign_in'; userId: string }
  /** The email is trusted and verified: the identity is linked to that account, which signs in. */
  | { action: 'link_and_sign_in'; userId: string }
  /** The email names an account, but is not trusted: the person proves that account first, then it is linked. */
  | { action: 'prove_account'; userId: string }
  /** Nobody has this identity or email: a new account, its email verified only when trusted. */
  | { action: 'sign_up'; emailVerified: boolean }
  /** Started from /account: the identity is linked to the signed-in user (or already is). */
  | { action: 'link_to_current'; userId: string; alreadyLinked: boolean }
  | { action: 'refuse'; reason: LinkingRefusal };

export type LinkingRefusal = 'inactive' | 'no_email' | 'signup_closed' | 'linked_elsewhere';

/** An asserted email counts as proof of the mailbox only when the admin trusts the provider AND it says verified. */
export function emailIsTrusted(facts: Pick<LinkingFacts, 'emailVerified' | 'provider'>): boolean {
  return facts.provider.trustEmail && facts.emailVerified;
}

export function decideLinking(facts: LinkingFacts): LinkingDecision {
  if (facts.linkToUserId !== undefined) {
    if (facts.linkedUser && facts.linkedUser.id !== facts.linkToUserId) return { action: 'refuse', reason: 'linked_elsewhere' };
    return { action: 'link_to_current', userId: facts.linkToUserId, alreadyLinked: facts.linkedUser !== undefined };
  }
  if (facts.linkedUser) {
    return facts.linkedUser.isActive ? { action: 'sign_in', userId: facts.linkedUser.id } : { action: 'refuse', reason: 'inactive' };
  }
  // Every account has an email: without one the identity can neither match an account nor make one.
  if (!facts.email) return { action: 'refuse', reason: 'no_email' };
  if (facts.emailUser) {
    if (!facts.emailUser.isActive) return { action: 'refuse', reason: 'inactive' };
    return emailIsTrusted(facts)
      ? { action: 'link_and_sign_in', userId: facts.emailUser.id }
      : { action: 'prove_account', userId: facts.emailUser.id };
  }
  if (!facts.provider.allowSignup || !facts.registrationOpen) return { action: 'refuse', reason: 'signup_closed' };
  return { action: 'sign_up', emailVerified: emailIsTrusted(facts) };
}

/** The ways an account can sign in (a passkey is a password-less sign-in, CONTRACT §10). */
export interface SignInWays {
  hasPassword: boolean;
  passkeys: number;
  identities: number;
}

/** CONTRACT §16: unlinking is refused when it would leave the account no way to sign in. */
export function mayUnlinkIdentity(ways: SignInWays): boolean {
  return ways.hasPassword || ways.passkeys > 0 || ways.identities > 1;
}

/** What the person is told when the callback refuses; never says whether another account exists beyond the rule. */
export const REFUSAL_MESSAGES: Record<LinkingRefusal, string> = {
  inactive: 'This account is deactivated. Contact your administrator.',
  no_email: 'The identity provider did not share an email address, so no account can be found or created for you.',
  signup_closed:
    'There is no account for this identity, and new accounts cannot be created this way. Ask your administrator for an invitation.',
  linked_elsewhere: 'This identity is already linked to another account.',
};

/** CONTRACT §11: adding a way to sign in from /account needs a sign-in at most this old. */
export const LINK_REAUTH_SECONDS = 600;

export function mayLinkFromSession(authTime: Date, now: Date): boolean {
  return now.getTime() - authTime.getTime() <= LINK_REAUTH_SECONDS * 1000;
}

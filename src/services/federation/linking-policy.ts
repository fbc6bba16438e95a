/**
 * CONTRACT §16 and §23 linking rules as pure functions (docs/federation.md): what an upstream sign-in does with the
 * identity (provider, issuer, subject) it proved, and whether an identity may be unlinked. No database: every link
 * path (the callback, a link from /account, a link completed after the person proved the account) loads the facts,
 * asks `decideLinking`, and carries out the decision; test/unit/linking-policy.test.ts checks every rule as a table.
 *
 * The rules in one place:
 * - an upstream `email` claim is used only when it is exactly one valid address (lib/email-address.ts);
 * - a known identity signs its user in;
 * - an identity is linked AUTOMATICALLY to the account with the asserted address only when the provider is trusted
 *   (`trust_email`) and asserts the address verified, AND the account's own address was verified here, AND the account
 *   holds no admin-tier role and no admin permission (`isPrivilegedAccount`). In every other case the person proves
 *   the account first (signs in to it); the owner of an address someone else registered takes it back with a mailed
 *   link first (which ends the registrant's password, sessions, factors and identities, CONTRACT §11, §23);
 * - every new link is mailed to the account's address (`LINKS_ARE_MAILED`, the sign-in service's one link helper);
 * - a take-back removes every linked identity (services/mfa/factor-reset.service.ts).
 */
import { holdsAdminRights } from '../rbac-policy';

/** The account whose email equals the asserted one, as the rules see it. */
export interface EmailAccount {
  id: string;
  isActive: boolean;
  /** The account's address was verified here (a mailed link, an operator, or a trusted sign-up). */
  emailVerified: boolean;
  /** It holds an admin-tier role or an admin permission (`isPrivilegedAccount`). */
  privileged: boolean;
}

/** What the callback knows when it decides. */
export interface LinkingFacts {
  /**
   * The account (provider, issuer, subject) is already linked to, if any. `needsConfirmation`: the identity was linked
   * to an administrator's account under the rules before the fourth review and waits for the owner to confirm it.
   */
  linkedUser?: { id: string; isActive: boolean; needsConfirmation?: boolean };
  /** The account whose email equals the asserted email (case-insensitively), if any. */
  emailUser?: EmailAccount;
  /** The asserted email, trimmed and lower-cased; undefined when the provider asserted none (or a malformed one). */
  email?: string;
  /** The provider asserted an `email` that is not exactly one valid address (a list, a display name, CRLF...). */
  emailMalformed?: boolean;
  /** The provider asserted `email_verified: true` (GitHub: the address is verified there). */
  emailVerified: boolean;
  provider: { trustEmail: boolean; allowSignup: boolean };
  /** REGISTRATION=open (CONTRACT §15). */
  registrationOpen: boolean;
  /**
   * The person proved this account: a link started from /account by the signed-in user, or a pending link completed
   * after signing in to the account it names. The identity is linked to it (or already is).
   */
  linkToUserId?: string;
}

/** Why an identity that matches an account by email is not linked automatically. */
export type ProofReason = 'untrusted_email' | 'unverified_account' | 'privileged_account';

export type LinkingDecision =
  /** A known identity: its user signs in. */
  | { action: 'sign_in'; userId: string }
  /** Trusted and verified email, a verified account without admin rights: linked (mailed), and it signs in. */
  | { action: 'link_and_sign_in'; userId: string }
  /** The email names an account, but no automatic link: the person proves that account first, then it is linked. */
  | { action: 'prove_account'; userId: string; because: ProofReason }
  /** Nobody has this identity or email: a new account, its email verified only when trusted. */
  | { action: 'sign_up'; emailVerified: boolean }
  /** The person proved the account (from /account, or a completed pending link): linked to it (or already is). */
  | { action: 'link_to_current'; userId: string; alreadyLinked: boolean }
  | { action: 'refuse'; reason: LinkingRefusal };

export type LinkingRefusal = 'inactive' | 'no_email' | 'invalid_email' | 'signup_closed' | 'linked_elsewhere' | 'unconfirmed';

/** Every new link (automatic, from /account, after a proof, or at sign-up) is mailed to the account's address. */
export const LINKS_ARE_MAILED = true;

/** An asserted email counts as proof of the mailbox only when the admin trusts the provider AND it says verified. */
export function emailIsTrusted(facts: Pick<LinkingFacts, 'emailVerified' | 'provider'>): boolean {
  return facts.provider.trustEmail && facts.emailVerified;
}

/**
 * An account that is never linked automatically because of its rights: the one rule of who is an administrator
 * (rbac-policy.ts `holdsAdminRights`: an admin-tier role or any admin permission, whatever the role's name), applied
 * to its global roles (application-scoped roles grant nothing on this server). The caller passes every role assigned
 * to the account, deactivated ones included, and the permissions of its global ones.
 */
export function isPrivilegedAccount(access: {
  roles: ReadonlyArray<{ name: string; application: string | null }>;
  permissions: readonly string[];
}): boolean {
  const roleNames = access.roles.filter((r) => r.application === null).map((r) => r.name);
  return holdsAdminRights({ roleNames, permissions: access.permissions });
}

/** Why an email match may not be linked without the person signing in to the account; undefined when it may. */
function proofNeeded(facts: LinkingFacts, account: EmailAccount): ProofReason | undefined {
  if (!emailIsTrusted(facts)) return 'untrusted_email';
  if (!account.emailVerified) return 'unverified_account';
  if (account.privileged) return 'privileged_account';
  return undefined;
}

export function decideLinking(facts: LinkingFacts): LinkingDecision {
  // A claim that is not one plain address is never stored, matched or trusted: the answer is refused as a whole.
  if (facts.emailMalformed) return { action: 'refuse', reason: 'invalid_email' };
  if (facts.linkToUserId !== undefined) {
    if (facts.linkedUser && facts.linkedUser.id !== facts.linkToUserId) return { action: 'refuse', reason: 'linked_elsewhere' };
    return { action: 'link_to_current', userId: facts.linkToUserId, alreadyLinked: facts.linkedUser !== undefined };
  }
  if (facts.linkedUser) {
    if (!facts.linkedUser.isActive) return { action: 'refuse', reason: 'inactive' };
    // Flagged at the upgrade: it signs nobody in until the owner, signed in another way, confirms it from /account
    // (a round trip with this very identity: link_to_current above, alreadyLinked).
    if (facts.linkedUser.needsConfirmation) return { action: 'refuse', reason: 'unconfirmed' };
    return { action: 'sign_in', userId: facts.linkedUser.id };
  }
  // Every account has an email: without one the identity can neither match an account nor make one.
  if (!facts.email) return { action: 'refuse', reason: 'no_email' };
  if (facts.emailUser) {
    if (!facts.emailUser.isActive) return { action: 'refuse', reason: 'inactive' };
    const because = proofNeeded(facts, facts.emailUser);
    return because
      ? { action: 'prove_account', userId: facts.emailUser.id, because }
      : { action: 'link_and_sign_in', userId: facts.emailUser.id };
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
  invalid_email:
    'The identity provider sent an email address that is not a single valid address, so it cannot be used. Contact your administrator.',
  signup_closed:
    'There is no account for this identity, and new accounts cannot be created this way. Ask your administrator for an invitation.',
  linked_elsewhere: 'This identity is already linked to another account.',
  unconfirmed:
    "This identity was linked to an administrator's account under earlier rules: the owner must confirm it from the account page first.",
};

/** CONTRACT §11: adding a way to sign in from /account needs a sign-in at most this old. */
export const LINK_REAUTH_SECONDS = 600;

export function mayLinkFromSession(authTime: Date, now: Date): boolean {
  return now.getTime() - authTime.getTime() <= LINK_REAUTH_SECONDS * 1000;
}

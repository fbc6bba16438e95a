import {
  decideLinking,
  isPrivilegedAccount,
  mayLinkFromSession,
  mayUnlinkIdentity,
  type LinkingDecision,
  type LinkingFacts,
} from '../../src/services/federation/linking-policy';

/** CONTRACT §16 and §23 linking rules, as a table of facts x expected decision (no database). */
const LINKED = { id: 'u-1', isActive: true };
const LINKED_INACTIVE = { id: 'u-1', isActive: false };
const LINKED_OTHER = { id: 'u-2', isActive: true };
/** Flagged at the upgrade (linked to an admin account under the old rules): paused until the owner confirms it. */
const LINKED_FLAGGED = { id: 'u-1', isActive: true, needsConfirmation: true };
/** Accounts with the asserted email: verified here, never verified, deactivated, holding admin rights. */
const ACTIVE = { id: 'u-1', isActive: true, emailVerified: true, privileged: false };
const INACTIVE = { ...ACTIVE, isActive: false };
const UNVERIFIED = { ...ACTIVE, emailVerified: false };
const PRIVILEGED = { ...ACTIVE, privileged: true };
const UNVERIFIED_PRIVILEGED = { ...ACTIVE, emailVerified: false, privileged: true };
const OTHER = { ...ACTIVE, id: 'u-2' };
const open = { trustEmail: false, allowSignup: true };
const trusted = { trustEmail: true, allowSignup: true };
const closed = { trustEmail: true, allowSignup: false };
const base: LinkingFacts = { email: 'a@example.test', emailVerified: true, provider: open, registrationOpen: true };

const prove = (because: 'untrusted_email' | 'unverified_account' | 'privileged_account'): LinkingDecision => ({
  action: 'prove_account',
  userId: 'u-1',
  because,
});

const cases: Array<[string, Partial<LinkingFacts>, LinkingDecision]> = [
  ['a known identity signs its user in', { linkedUser: LINKED }, { action: 'sign_in', userId: 'u-1' }],
  [
    'a known identity signs in even when another account has the email',
    { linkedUser: LINKED, emailUser: OTHER },
    { action: 'sign_in', userId: 'u-1' },
  ],
  ['a known identity of a deactivated user is refused', { linkedUser: LINKED_INACTIVE }, { action: 'refuse', reason: 'inactive' }],
  ['a flagged identity signs nobody in', { linkedUser: LINKED_FLAGGED }, { action: 'refuse', reason: 'unconfirmed' }],
  [
    'a flagged identity signs nobody in, even with a trusted email naming its account',
    { linkedUser: LINKED_FLAGGED, emailUser: ACTIVE, provider: trusted },
    { action: 'refuse', reason: 'unconfirmed' },
  ],
  [
    'the owner, signed in, going through a flagged identity from /account: already linked (the service confirms it)',
    { linkToUserId: 'u-1', linkedUser: LINKED_FLAGGED },
    { action: 'link_to_current', userId: 'u-1', alreadyLinked: true },
  ],
  [
    'email match, trusted and verified upstream, verified account without admin rights: linked automatically',
    { emailUser: ACTIVE, provider: trusted },
    { action: 'link_and_sign_in', userId: 'u-1' },
  ],
  [
    'email match, trusted but not verified upstream: prove the account',
    { emailUser: ACTIVE, provider: trusted, emailVerified: false },
    prove('untrusted_email'),
  ],
  [
    'email match, verified upstream but provider not trusted (the default): prove the account',
    { emailUser: ACTIVE },
    prove('untrusted_email'),
  ],
  ['email match, neither: prove the account', { emailUser: ACTIVE, emailVerified: false }, prove('untrusted_email')],
  [
    'email match, trusted, but the account address was never verified (a squatter): never automatic',
    { emailUser: UNVERIFIED, provider: trusted },
    prove('unverified_account'),
  ],
  ['email match, not trusted, account never verified: prove the account', { emailUser: UNVERIFIED }, prove('untrusted_email')],
  [
    'email match, trusted, the account holds an admin-tier role or admin permission: never automatic',
    { emailUser: PRIVILEGED, provider: trusted },
    prove('privileged_account'),
  ],
  [
    'email match, trusted, never verified and privileged: never automatic',
    { emailUser: UNVERIFIED_PRIVILEGED, provider: trusted },
    prove('unverified_account'),
  ],
  ['email match, not trusted, privileged: prove the account', { emailUser: PRIVILEGED }, prove('untrusted_email')],
  ['email match of a deactivated account is refused', { emailUser: INACTIVE, provider: trusted }, { action: 'refuse', reason: 'inactive' }],
  ['no account, allow_signup and registration open: sign-up, unverified (not trusted)', {}, { action: 'sign_up', emailVerified: false }],
  ['no account, trusted and verified: sign-up verified', { provider: trusted }, { action: 'sign_up', emailVerified: true }],
  [
    'no account, trusted but unverified: sign-up unverified',
    { provider: trusted, emailVerified: false },
    { action: 'sign_up', emailVerified: false },
  ],
  ['no account, allow_signup false: refused', { provider: closed }, { action: 'refuse', reason: 'signup_closed' }],
  ['no account, REGISTRATION=closed: refused', { registrationOpen: false }, { action: 'refuse', reason: 'signup_closed' }],
  ['no email asserted and unknown identity: refused', { email: undefined }, { action: 'refuse', reason: 'no_email' }],
  ['no email asserted but a known identity: signs in', { email: undefined, linkedUser: LINKED }, { action: 'sign_in', userId: 'u-1' }],
  [
    'a malformed email claim (a list, a display name, CRLF) is refused, even for a known identity',
    { email: undefined, emailMalformed: true, linkedUser: LINKED },
    { action: 'refuse', reason: 'invalid_email' },
  ],
  [
    'a malformed email claim is refused even with a trusted provider and no account',
    { email: undefined, emailMalformed: true, provider: trusted },
    { action: 'refuse', reason: 'invalid_email' },
  ],
  [
    'a malformed email claim is refused when linking from /account',
    { email: undefined, emailMalformed: true, linkToUserId: 'u-1' },
    { action: 'refuse', reason: 'invalid_email' },
  ],
  [
    'the person proved the account (from /account or a completed pending link): a new identity is linked to it',
    { linkToUserId: 'u-1', emailUser: OTHER },
    { action: 'link_to_current', userId: 'u-1', alreadyLinked: false },
  ],
  [
    'the person proved a privileged account: linked (the proof is the person signing in, not the email)',
    { linkToUserId: 'u-1', emailUser: PRIVILEGED, provider: trusted },
    { action: 'link_to_current', userId: 'u-1', alreadyLinked: false },
  ],
  [
    'linking from /account: already linked to this user',
    { linkToUserId: 'u-1', linkedUser: LINKED },
    { action: 'link_to_current', userId: 'u-1', alreadyLinked: true },
  ],
  [
    'linking from /account: linked to someone else is refused',
    { linkToUserId: 'u-1', linkedUser: LINKED_OTHER },
    { action: 'refuse', reason: 'linked_elsewhere' },
  ],
];

describe('decideLinking', () => {
  test.each(cases)('%s', (_name, facts, expected) => {
    expect(decideLinking({ ...base, ...facts })).toEqual(expected);
  });
});

describe('isPrivilegedAccount: an admin-tier role or any permission of this server', () => {
  const role = (name: string, application: string | null = null) => ({ name, application });
  test.each([
    ['no role, no permission', [], [], false],
    ['super_admin', [role('super_admin')], ['users:read'], true],
    ['admin', [role('admin')], [], true],
    ['manager', [role('manager')], [], true],
    ['a custom role with an admin permission', [role('helpdesk')], ['users:write'], true],
    ['a custom role without permissions', [role('reader')], [], false],
    ['an application-scoped role named admin (governs another application only)', [role('admin', 'crm')], [], false],
  ])('%s -> %s', (_name, roles, permissions, expected) => {
    expect(isPrivilegedAccount({ roles, permissions })).toBe(expected);
  });
});

describe('mayUnlinkIdentity: never the last way to sign in', () => {
  test.each([
    [{ hasPassword: false, passkeys: 0, identities: 1 }, false],
    [{ hasPassword: true, passkeys: 0, identities: 1 }, true],
    [{ hasPassword: false, passkeys: 1, identities: 1 }, true],
    [{ hasPassword: false, passkeys: 0, identities: 2 }, true],
  ])('%o -> %s', (ways, expected) => {
    expect(mayUnlinkIdentity(ways)).toBe(expected);
  });
});

describe('mayLinkFromSession: a sign-in at most 10 minutes old', () => {
  const now = new Date('2026-01-01T12:00:00Z');
  test.each([
    [0, true],
    [600, true],
    [601, false],
  ])('%i seconds old -> %s', (age, expected) => {
    expect(mayLinkFromSession(new Date(now.getTime() - age * 1000), now)).toBe(expected);
  });
});

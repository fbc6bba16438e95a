import {
  decideLinking,
  mayLinkFromSession,
  mayUnlinkIdentity,
  type LinkingDecision,
  type LinkingFacts,
} from '../../src/services/federation/linking-policy';

/** CONTRACT §16 linking rules, as a table of facts x expected decision (no database). */
const ACTIVE = { id: 'u-1', isActive: true };
const INACTIVE = { id: 'u-1', isActive: false };
const OTHER = { id: 'u-2', isActive: true };
const open = { trustEmail: false, allowSignup: true };
const trusted = { trustEmail: true, allowSignup: true };
const closed = { trustEmail: true, allowSignup: false };
const base: LinkingFacts = { email: 'a@example.test', emailVerified: true, provider: open, registrationOpen: true };

const cases: Array<[string, Partial<LinkingFacts>, LinkingDecision]> = [
  ['a known identity signs its user in', { linkedUser: ACTIVE }, { action: 'sign_in', userId: 'u-1' }],
  [
    'a known identity signs in even when another account has the email',
    { linkedUser: ACTIVE, emailUser: OTHER },
    { action: 'sign_in', userId: 'u-1' },
  ],
  ['a known identity of a deactivated user is refused', { linkedUser: INACTIVE }, { action: 'refuse', reason: 'inactive' }],
  [
    'email match, trusted and verified: linked automatically',
    { emailUser: ACTIVE, provider: trusted },
    { action: 'link_and_sign_in', userId: 'u-1' },
  ],
  [
    'email match, trusted but not verified: prove the account',
    { emailUser: ACTIVE, provider: trusted, emailVerified: false },
    { action: 'prove_account', userId: 'u-1' },
  ],
  [
    'email match, verified but not trusted: prove the account',
    { emailUser: ACTIVE, provider: open },
    { action: 'prove_account', userId: 'u-1' },
  ],
  ['email match, neither: prove the account', { emailUser: ACTIVE, emailVerified: false }, { action: 'prove_account', userId: 'u-1' }],
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
  ['no email asserted but a known identity: signs in', { email: undefined, linkedUser: ACTIVE }, { action: 'sign_in', userId: 'u-1' }],
  [
    'linking from /account: a new identity is linked to the signed-in user',
    { linkToUserId: 'u-1', emailUser: OTHER },
    { action: 'link_to_current', userId: 'u-1', alreadyLinked: false },
  ],
  [
    'linking from /account: already linked to this user',
    { linkToUserId: 'u-1', linkedUser: ACTIVE },
    { action: 'link_to_current', userId: 'u-1', alreadyLinked: true },
  ],
  [
    'linking from /account: linked to someone else is refused',
    { linkToUserId: 'u-1', linkedUser: OTHER },
    { action: 'refuse', reason: 'linked_elsewhere' },
  ],
];

describe('decideLinking', () => {
  test.each(cases)('%s', (_name, facts, expected) => {
    expect(decideLinking({ ...base, ...facts })).toEqual(expected);
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

import {
  factorChangeVerdict,
  RECENT_SIGN_IN_SECONDS,
  type FactorChangeFacts,
  type ReauthVerdict,
} from '../../src/services/mfa/reauth-policy';

/** The re-authentication rule for factor changes (CONTRACT §11, docs/mfa.md) as a table: session × proof × expected. */

const outcome = (v: ReauthVerdict) => (v.allowed ? 'allowed' : v.code);
const RECENT = 60;
const EDGE = RECENT_SIGN_IN_SECONDS;
const OLD = RECENT_SIGN_IN_SECONDS + 1;

const facts = (f: Partial<FactorChangeFacts>): FactorChangeFacts => ({
  authAgeSeconds: RECENT,
  sessionHasSecondFactor: false,
  accountHasFactor: false,
  proof: 'none',
  ...f,
});

test.each([
  // No factor yet (the first enrolment).
  ['recent sign-in, no proof', facts({}), 'allowed'],
  ['sign-in exactly 10 minutes old', facts({ authAgeSeconds: EDGE }), 'allowed'],
  ['older sign-in, no proof (a stolen token)', facts({ authAgeSeconds: OLD }), 'reauthentication_required'],
  ['older sign-in, password proof', facts({ authAgeSeconds: OLD, proof: 'password' }), 'allowed'],
  ['older sign-in, factor proof', facts({ authAgeSeconds: OLD, proof: 'factor' }), 'allowed'],
  // The account has a factor: a session opened without one needs a factor proof (step-up).
  ['factor account, password-only session, recent', facts({ accountHasFactor: true }), 'mfa_required'],
  ['factor account, password-only session, password proof', facts({ accountHasFactor: true, proof: 'password' }), 'mfa_required'],
  [
    'factor account, password-only session, factor proof',
    facts({ accountHasFactor: true, authAgeSeconds: OLD, proof: 'factor' }),
    'allowed',
  ],
  ['factor account, second-factor session, recent', facts({ accountHasFactor: true, sessionHasSecondFactor: true }), 'allowed'],
  [
    'factor account, second-factor session, old',
    facts({ accountHasFactor: true, sessionHasSecondFactor: true, authAgeSeconds: OLD }),
    'reauthentication_required',
  ],
  [
    'factor account, second-factor session, old, password',
    facts({ accountHasFactor: true, sessionHasSecondFactor: true, authAgeSeconds: OLD, proof: 'password' }),
    'allowed',
  ],
  // Operations that always ask for a proof (removing TOTP, new recovery codes).
  [
    'proof required, recent sign-in, none sent',
    facts({ accountHasFactor: true, sessionHasSecondFactor: true, proofRequired: true }),
    'reauthentication_required',
  ],
  [
    'proof required, password',
    facts({ accountHasFactor: true, sessionHasSecondFactor: true, proofRequired: true, proof: 'password' }),
    'allowed',
  ],
  ['proof required, factor', facts({ accountHasFactor: true, proofRequired: true, proof: 'factor' }), 'allowed'],
] as const)('factorChangeVerdict: %s -> %s', (_case, input, expected) => {
  expect(outcome(factorChangeVerdict(input))).toBe(expected);
});

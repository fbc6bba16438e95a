/**
 * The re-authentication rule for changing how an account signs in (CONTRACT §11), as a pure function: the services
 * load the facts, verify any proof the request carried, ask here, and enforce the verdict; test/unit/reauth-policy
 * .test.ts checks it as a table. No database, no clock of its own.
 */

/** A sign-in at most this old counts as recent: enough to add or remove a factor without another proof. */
export const RECENT_SIGN_IN_SECONDS = 600;

/** A pending TOTP enrolment lives this long, and only for the session that started it. */
export const PENDING_TOTP_TTL_SECONDS = 600;

/** What the request proved, already verified: nothing, the password, or an existing second factor. */
export type ProofKind = 'none' | 'password' | 'factor';

export interface FactorChangeFacts {
  /** Seconds since the session's sign-in (its `auth_time`, moved forward by a proof verified in this request). */
  authAgeSeconds: number;
  /** The session's `amr` holds a second factor (otp, hwk, rec). */
  sessionHasSecondFactor: boolean;
  /** The account already has a confirmed TOTP or a passkey. */
  accountHasFactor: boolean;
  proof: ProofKind;
  /** The operation asks for a proof whatever the session's age (removing TOTP, new recovery codes: CONTRACT §10). */
  proofRequired?: boolean;
}

export type ReauthVerdict = { allowed: true } | { allowed: false; code: 'reauthentication_required' | 'mfa_required'; reason: string };

const ALLOWED: ReauthVerdict = { allowed: true };

/**
 * - A verified second factor in the request is always enough (it proves the password holder and the factor).
 * - Once the account has a factor, a session opened without one may change factors only with a factor proof: a
 *   stolen password-only session must not plant its own passkey past the owner's second factor (step-up).
 * - Otherwise the password in the request is enough, and without any proof a sign-in at most
 *   RECENT_SIGN_IN_SECONDS old (unless the operation always asks for a proof).
 */
export function factorChangeVerdict(facts: FactorChangeFacts): ReauthVerdict {
  if (facts.proof === 'factor') return ALLOWED;
  if (facts.accountHasFactor && !facts.sessionHasSecondFactor) {
    return {
      allowed: false,
      code: 'mfa_required',
      reason: 'Confirm with your second factor (a code, a recovery code or a passkey) to change your sign-in methods',
    };
  }
  if (facts.proof === 'password') return ALLOWED;
  if (facts.proofRequired) {
    return { allowed: false, code: 'reauthentication_required', reason: 'Confirm with your password or a second factor to do this' };
  }
  if (facts.authAgeSeconds <= RECENT_SIGN_IN_SECONDS) return ALLOWED;
  return {
    allowed: false,
    code: 'reauthentication_required',
    reason: 'Your sign-in is more than 10 minutes old: confirm with your password or a second factor, or sign in again',
  };
}

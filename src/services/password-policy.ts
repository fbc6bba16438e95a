import { AppError } from '../errors';
import { isCommonBreachedPassword } from '../lib/breached-passwords';
import { PASSWORD_MAX_BYTES } from '../lib/password';
import { checkPwnedRange } from '../lib/pwned-range';
import type { AppContext, ServiceContext } from './context';

/**
 * The password policy (docs/passwords.md), declared once: every path that sets a password (register, change-password,
 * set-password and invitations, /setup, create-admin, the pages, imports without a hash) calls `assertPasswordAllowed`,
 * and the pages show the refusal's `reason` in their language. Existing passwords are never checked again: the policy
 * applies when a password is chosen, not when one signs in.
 */
export interface PasswordPolicy {
  /** 6 (the default, the spec's minimum) to 72: characters (code points), not bytes. */
  min_length: number;
  /** Refuse passwords of the shipped breached list (and of Have I Been Pwned with PASSWORD_BREACH_API=hibp). */
  breached_check: boolean;
  /** Refuse passwords containing the email's local part (3+ characters) or the brand name, ignoring case. */
  reject_email_local_part: boolean;
}

export type PasswordRefusalReason = 'too_short' | 'too_long' | 'breached' | 'personal';

/** What the person chooses the password for: their address and the brand name the pages show. */
export interface PasswordOwner {
  email: string;
  brandName: string;
}

/** The shortest local part that counts as personal (`jo@…` would refuse every password containing "jo"). */
export const PERSONAL_MIN_CHARACTERS = 3;

/**
 * The rules without I/O, in the order a person fixes them: length first, then what the password contains, then whether
 * it is known. `isBreached` is the shipped list (a parameter so that the table test needs no file).
 */
export function passwordRuleVerdict(
  policy: PasswordPolicy,
  password: string,
  owner: PasswordOwner,
  isBreached: (password: string) => boolean = isCommonBreachedPassword,
): PasswordRefusalReason | undefined {
  if (Buffer.byteLength(password, 'utf8') > PASSWORD_MAX_BYTES) return 'too_long';
  if ([...password].length < policy.min_length) return 'too_short';
  if (policy.reject_email_local_part) {
    const lower = password.toLowerCase();
    const localPart = (owner.email.split('@')[0] ?? '').trim().toLowerCase();
    const brand = owner.brandName.trim().toLowerCase();
    const personal = [localPart, brand].filter((word) => [...word].length >= PERSONAL_MIN_CHARACTERS);
    if (personal.some((word) => lower.includes(word))) return 'personal';
  }
  if (policy.breached_check && isBreached(password)) return 'breached';
  return undefined;
}

/** The API's English sentence of a refusal (the pages show their catalogue's `pageErrors.passwordRefused`). */
export function passwordRefusalMessage(reason: PasswordRefusalReason, field: string, minLength: number): string {
  switch (reason) {
    case 'too_short':
      return `${field} must be at least ${minLength} characters`;
    case 'too_long':
      return `${field} must be at most ${PASSWORD_MAX_BYTES} bytes`;
    case 'breached':
      return `${field} appears in lists of breached passwords: choose another one`;
    case 'personal':
      return `${field} must not contain your email address's name or the service's name`;
  }
}

/** 400 validation_error naming the field and why (too short, too long, breached, personal). */
export class PasswordRefused extends AppError {
  constructor(
    readonly reason: PasswordRefusalReason,
    readonly minLength: number,
    field: string,
  ) {
    const message = passwordRefusalMessage(reason, field, minLength);
    super('validation_error', message, { details: [{ path: field, message }] });
    this.name = 'PasswordRefused';
  }
}

/** The policy in force (CONTRACT: the live setting `password_policy`). */
export function currentPasswordPolicy(ctx: AppContext): PasswordPolicy {
  return ctx.settings.current.values.password_policy;
}

/**
 * Throws PasswordRefused when the policy in force refuses `password` for the account `email`. With breached_check and
 * PASSWORD_BREACH_API=hibp, a password the shipped list does not hold is also looked up by k-anonymity; when the API
 * does not answer within 2 s the password is accepted and a warning logged (fails open: an outage of a third party
 * never stops people from choosing passwords).
 */
export async function assertPasswordAllowed(
  ctx: ServiceContext,
  password: string,
  input: { email: string; field?: string },
): Promise<void> {
  const policy = currentPasswordPolicy(ctx);
  const field = input.field ?? 'password';
  const owner = { email: input.email, brandName: ctx.settings.current.values.brand_name };
  const reason = passwordRuleVerdict(policy, password, owner);
  if (reason) throw new PasswordRefused(reason, policy.min_length, field);
  if (policy.breached_check && ctx.config.passwordBreachApi === 'hibp') {
    const answer = await checkPwnedRange(ctx.config.passwordBreachApiUrl, password);
    if ('unavailable' in answer) {
      ctx.logger.warn(
        { why: answer.unavailable },
        'password policy: the breached-password API did not answer; password accepted (fails open)',
      );
      return;
    }
    if (answer.found) throw new PasswordRefused('breached', policy.min_length, field);
  }
}

/** The minimum length in force, which the pages state beside the field ("At least N characters"). */
export function minPasswordLength(ctx: AppContext): number {
  return currentPasswordPolicy(ctx).min_length;
}

import { z } from 'zod';

/**
 * The one rule of what an email address is (CONTRACT §8, §23): at most 254 characters and one address in the plain
 * `local@domain` form zod checks (no display name, no quotes, no list, no whitespace or control characters). The
 * API's `email` field (routes/common.schemas.ts) trims what a person typed and applies it; an upstream identity
 * provider's `email` claim must satisfy it exactly as sent (services/federation).
 */
export const EMAIL_MAX_LENGTH = 254;

export const emailAddress = z
  .string()
  .max(EMAIL_MAX_LENGTH, 'email is too long')
  .pipe(z.email({ error: 'email must be a valid email address' }));

/** True when `value` is exactly one valid address, untrimmed (an upstream claim is taken as sent or not at all). */
export function isSingleEmailAddress(value: string): boolean {
  return emailAddress.safeParse(value).success;
}

import type { AppError, ErrorCode } from '../../errors';
import type { Messages } from '../../i18n';
import { PASSWORD_MAX_BYTES, PASSWORD_MIN_LENGTH } from '../../lib/password';
import { PasswordRefused } from '../../services/password-policy';

type KnownScope = Exclude<keyof Messages['scopes'], 'other'>;
const isKnownScope = (t: Messages, scope: string): scope is KnownScope => scope !== 'other' && Object.hasOwn(t.scopes, scope);

/** The plain words for a scope on the consent and device pages, in the page's language (CONTRACT §15). */
export function describeScope(t: Messages, scope: string): string {
  return isKnownScope(t, scope) ? t.scopes[scope] : t.scopes.other(scope);
}

export function describeScopes(t: Messages, scopes: readonly string[]): Array<{ scope: string; description: string }> {
  return scopes.map((scope) => ({ scope, description: describeScope(t, scope) }));
}

/** What a form says for some of the error codes it can meet, when the generic sentence of the code is too vague. */
export type PageErrorTexts = Partial<Record<ErrorCode, string>>;

/**
 * The page boundary of service errors (CONTRACT §15): a service throws an AppError whose message is the API's English
 * `message`; a page shows the sentence of the catalogue for its code instead, or the form's own sentence for that code.
 * The mapping is by code, never by the English text, so a service can reword its message without breaking a page.
 */
export function pageErrorMessage(t: Messages, err: AppError, texts: PageErrorTexts = {}): string {
  if (err instanceof PasswordRefused) return passwordRefusalText(t, err);
  return texts[err.code] ?? t.pageErrors[err.code];
}

/** Why the password policy refused a password (services/password-policy.ts), in the page's words. */
export function passwordRefusalText(t: Messages, err: PasswordRefused): string {
  switch (err.reason) {
    case 'too_short':
      return t.pageErrors.passwordTooShort(err.minLength);
    case 'too_long':
      return t.pageErrors.passwordTooLong;
    case 'breached':
      return t.pageErrors.passwordBreached;
    case 'personal':
      return t.pageErrors.passwordPersonal;
  }
}

/** Why a new password is refused, in the page's words (the rule itself is the API's passwordField). */
export function passwordProblem(t: Messages, password: string): string {
  return Buffer.byteLength(password, 'utf8') > PASSWORD_MAX_BYTES
    ? t.pageErrors.passwordTooLong
    : t.pageErrors.passwordTooShort(PASSWORD_MIN_LENGTH);
}

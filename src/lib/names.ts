/** C0/C1 controls, line and paragraph separators, and bidi overrides: a name is one plain line of text. */
export const NAME_FORBIDDEN = /[\p{Cc}\u2028\u2029\u202A-\u202E\u2066-\u2069]/u;
export const NAME_MAX_CHARACTERS = 100;

/**
 * Names (users' first/last name, client name; CONTRACT §8): one line, no control characters, at most 100
 * characters (code points). Why a name is refused, or undefined when it passes; `value` is already trimmed.
 */
export function nameProblem(value: string): string | undefined {
  if (value.length === 0) return 'is required';
  if ([...value].length > NAME_MAX_CHARACTERS) return `is too long (at most ${NAME_MAX_CHARACTERS} characters)`;
  if (NAME_FORBIDDEN.test(value)) return 'must be one line without control characters';
  return undefined;
}

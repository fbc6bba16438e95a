import { z } from 'zod';
import { messagesFor, sayIssue } from '../i18n';
import { emailAddress } from '../lib/email-address';
import { NAME_FORBIDDEN, NAME_MAX_CHARACTERS } from '../lib/names';
import { PASSWORD_MAX_BYTES, PASSWORD_MIN_LENGTH } from '../lib/password';

/** Shared field rules, so every endpoint that takes a password or an email applies the same limits. */
export const emailField = z.string({ error: 'email is required' }).trim().pipe(emailAddress);

export const passwordField = z
  .string({ error: 'password is required' })
  // Characters are code points: three emoji are three characters, not six UTF-16 units.
  .refine((p) => [...p].length >= PASSWORD_MIN_LENGTH, {
    message: `password must be at least ${PASSWORD_MIN_LENGTH} characters`,
    params: { said: { key: 'fieldMinChars', params: { min: String(PASSWORD_MIN_LENGTH) } } },
  })
  .refine((p) => Buffer.byteLength(p, 'utf8') <= PASSWORD_MAX_BYTES, {
    message: `password must be at most ${PASSWORD_MAX_BYTES} bytes`,
    params: { said: { key: 'fieldMaxBytes', params: { max: String(PASSWORD_MAX_BYTES) } } },
  });

export { NAME_MAX_CHARACTERS };

/**
 * Names (users' first/last name, client name; CONTRACT §8): one line, no control characters, at most 100
 * characters (code points), so a name can never add lines or links to a mail or a page that shows it.
 */
export const nameField = (field: string) =>
  z
    .string({ error: `${field} is required` })
    .trim()
    .min(1, `${field} is required`)
    .refine((v) => [...v].length <= NAME_MAX_CHARACTERS, {
      message: `${field} is too long (at most ${NAME_MAX_CHARACTERS} characters)`,
      params: { said: { key: 'fieldMaxChars', params: { max: String(NAME_MAX_CHARACTERS) } } },
    })
    .refine((v) => !NAME_FORBIDDEN.test(v), {
      message: `${field} must be one line without control characters`,
      params: { said: { key: 'fieldOneLine' } },
    });

/**
 * `limit` of a paged list: a whole number from 1, `size` when omitted; a larger one is capped to `max` rather than
 * refused (the answer echoes the limit applied).
 */
export const pageLimitField = (size: number, max: number) =>
  z.coerce
    .number({ error: 'limit must be a number' })
    .int('limit must be an integer')
    .min(1, 'limit must be at least 1')
    .default(size)
    .transform((n) => Math.min(n, max));

/** `cursor` of a list paged by keyset: the previous page's next_cursor, as this server gave it out. */
export const cursorField = z
  .string({ error: 'cursor must be a single string' })
  .regex(/^[A-Za-z0-9_-]{1,40}$/, messagesFor('en').validation.cursorUnknown)
  .meta({ description: 'next_cursor of the previous page (opaque)' });

export const uuidField = (name: string) => z.uuid({ error: `${name} must be a uuid` });

/** A timestamp as the client reads it (a Date serialised by res.json). */
export const timestampField = z.iso.datetime();
export const timestampFields = { created_at: timestampField, updated_at: timestampField };

/** The error body of CONTRACT §2. */
export const errorBody = z
  .object({
    error: z.string().meta({ description: 'Stable machine code (CONTRACT §2)' }),
    message: z.string(),
    details: z
      .array(z.object({ path: z.string(), message: z.string(), row: z.number().int().optional(), email: z.string().optional() }))
      .optional(),
  })
  .meta({ id: 'Error' });

/** RFC 6749 §5.2 error body of the OAuth protocol endpoints. */
export const oauthErrorBody = z.object({ error: z.string(), error_description: z.string() }).meta({ id: 'OAuthError' });

/** `{ success: true }`. */
export const successBody = z.strictObject({ success: z.literal(true) });

/**
 * An https URL a page may link to or show (RFC 7591 `client_uri`, `logo_uri`; CONTRACT §13): absolute, https, a
 * host, no user information, no whitespace or control characters, at most 2048 characters.
 */
export const httpsUrlField = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .max(2048, `${field} is too long`)
    .refine(
      (v) => {
        if (/[\s\x00-\x1f\x7f\\]/.test(v)) return false;
        try {
          const url = new URL(v);
          return url.protocol === 'https:' && url.hostname !== '' && !url.username && !url.password;
        } catch {
          return false;
        }
      },
      { message: `${field} must be an https URL` },
    );

/**
 * The body of a partial update (PATCH/PUT of one thing): the fields it may change, each optional, and a body that
 * names none refused ("nothing to update"); `.transform()` it to the service's input.
 */
export const updateBody = <S extends z.ZodRawShape>(fields: S) =>
  z
    .object(fields)
    .partial()
    .refine((b) => Object.values(b).some((v) => v !== undefined), sayIssue('nothingToUpdate'));

import { z } from 'zod';
import { emailField, passwordField, timestampField } from '../common.schemas';

/** Our link and login tokens are 43 characters; the cap only keeps absurd input away from the database. */
const tokenField = (field: string) =>
  z
    .string({ error: `${field} is required` })
    .min(1, `${field} is required`)
    .max(512, `${field} is too long`);

/** Malformed ids answer 404 like another user's session (never 500, and no oracle): see account.router. */
export const sessionIdParam = z.object({ sessionId: z.uuid() });

export const changePasswordBody = z
  .object({
    // Not the full password rule: a wrong current password of any length is just wrong (401, not a 400 oracle).
    current_password: z.string({ error: 'current_password is required' }).min(1, 'current_password is required').max(1024),
    new_password: passwordField,
  })
  .transform((b) => ({ currentPassword: b.current_password, newPassword: b.new_password }));

export const linkTokenBody = z.object({ token: tokenField('token') });

export const setPasswordBody = z.object({ token: tokenField('token'), password: passwordField });

export const emailBody = z.object({ email: emailField });

/**
 * Destinations are taken as they come (strings, arrays, numbers, …) and judged by src/lib/login-target.ts, so
 * that anything unusable is the one answer 400 invalid_target rather than a validation_error.
 */
const loginTargetShape = {
  app: z.unknown().optional(),
  redirect_to: z.unknown().optional(),
  path: z.unknown().optional(),
};
export const loginTargetQuery = z.object(loginTargetShape);
export const loginRequestBody = z.object(loginTargetShape);

export const loginResolveBody = z.object({ login_token: tokenField('login_token') });

export const sessionsBody = z.strictObject({
  sessions: z.array(
    z.strictObject({
      id: z.uuid(),
      created_at: timestampField,
      last_used_at: timestampField,
      expires_at: timestampField,
      ip: z.string().nullable(),
      user_agent: z.string().nullable(),
      client_id: z.string().nullable(),
      current: z.boolean(),
    }),
  ),
});

export const revokedCountBody = z.strictObject({ revoked: z.number().int() });

export const linkInfoBody = z.strictObject({ valid: z.literal(true), email: z.string(), purpose: z.string() });

export const emailConfirmedBody = z.strictObject({ success: z.literal(true), email: z.string(), email_verified: z.literal(true) });

export const urlBody = z.strictObject({ url: z.string() });

export const loginTokenBody = z.strictObject({ login_token: z.string(), expires_in: z.number().int() });

/** An application the person approved (its grant): the account's own list and an administrator's view of it. */
export const connectedAppBody = z.strictObject({
  client_id: z.string(),
  name: z.string(),
  scopes: z.array(z.string()),
  granted_at: timestampField,
  last_used_at: timestampField.nullable(),
});
export type ConnectedApp = z.output<typeof connectedAppBody>;

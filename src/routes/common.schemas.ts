import { z } from 'zod';
import { PASSWORD_MAX_BYTES, PASSWORD_MIN_LENGTH } from '../lib/password';

/** Shared field rules, so every endpoint that takes a password or an email applies the same limits. */
export const emailField = z
  .string({ error: 'email is required' })
  .trim()
  .max(254, 'email is too long')
  .pipe(z.email({ error: 'email must be a valid email address' }));

export const passwordField = z
  .string({ error: 'password is required' })
  // Characters are code points: three emoji are three characters, not six UTF-16 units.
  .refine((p) => [...p].length >= PASSWORD_MIN_LENGTH, { message: `password must be at least ${PASSWORD_MIN_LENGTH} characters` })
  .refine((p) => Buffer.byteLength(p, 'utf8') <= PASSWORD_MAX_BYTES, {
    message: `password must be at most ${PASSWORD_MAX_BYTES} bytes`,
  });

export const nameField = (field: string) =>
  z.string({ error: `${field} is required` }).trim().min(1, `${field} is required`).max(100, `${field} is too long`);

export const uuidField = (name: string) => z.uuid({ error: `${name} must be a uuid` });

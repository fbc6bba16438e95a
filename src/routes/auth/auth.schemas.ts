import { z } from 'zod';
import { emailField, nameField, passwordField } from '../common.schemas';

export const registerBody = z.object({
  first_name: nameField('first_name'),
  last_name: nameField('last_name'),
  email: emailField,
  password: passwordField,
});

export const loginBody = z.object({
  email: emailField,
  // Not the full password rule: a wrong password of any length is just a wrong password (no 400 oracle).
  password: z.string({ error: 'password is required' }).min(1, 'password is required').max(1024),
});

export const updateMeBody = z
  .object({ first_name: nameField('first_name').optional(), last_name: nameField('last_name').optional() })
  .refine((b) => b.first_name !== undefined || b.last_name !== undefined, { message: 'Nothing to update' });

export const refreshBody = z.object({ refreshToken: z.string().max(8192).optional() }).optional();
